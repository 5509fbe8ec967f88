//! Error type shared by every kernel; free of PyO3 so kernels stay testable with `cargo test`.
//! The binding layer maps each variant to a Python exception and prefixes the kernel name.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelError {
    /// Wrong Arrow type or wrong Python type (-> `TypeError`).
    Type(String),
    /// Argument has the right type but an unusable value (-> `ValueError`).
    Value(String),
    /// A bug in the kernel, e.g. a caught panic (-> `RuntimeError`).
    Internal(String),
}

pub type KResult<T> = Result<T, KernelError>;

impl KernelError {
    pub fn type_err(msg: impl Into<String>) -> Self {
        Self::Type(msg.into())
    }
    pub fn value(msg: impl Into<String>) -> Self {
        Self::Value(msg.into())
    }
    pub fn message(&self) -> &str {
        match self {
            Self::Type(m) | Self::Value(m) | Self::Internal(m) => m,
        }
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for KernelError {}

impl From<arrow_schema::ArrowError> for KernelError {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Self::Internal(format!("arrow error: {e}"))
    }
}
