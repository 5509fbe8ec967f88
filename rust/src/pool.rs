//! The rayon pool every parallel kernel runs on. Its size comes from `MDF_NUM_THREADS`
//! (read once, at the first parallel call) so a process can pin kernel parallelism without
//! touching rayon's global pool, which other libraries in the same process may own.

use std::sync::OnceLock;

use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::error::{KResult, KernelError};

pub const ENV_VAR: &str = "MDF_NUM_THREADS";

static POOL: OnceLock<Result<ThreadPool, String>> = OnceLock::new();

/// Parse a `MDF_NUM_THREADS` value; `None`/empty means "all cores".
pub fn parse_num_threads(value: Option<&str>) -> Result<usize, String> {
    let default = || std::thread::available_parallelism().map_or(1, |n| n.get());
    match value.map(str::trim) {
        None | Some("") => Ok(default()),
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "{ENV_VAR} must be a positive integer, got {v:?}; unset it to use all cores"
            )),
        },
    }
}

fn build() -> Result<ThreadPool, String> {
    let env = std::env::var(ENV_VAR).ok();
    let n = parse_num_threads(env.as_deref())?;
    ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(|i| format!("mdf-kernels-{i}"))
        .build()
        .map_err(|e| format!("cannot start {n} kernel threads: {e}"))
}

/// The shared pool, built on first use.
pub fn pool() -> KResult<&'static ThreadPool> {
    POOL.get_or_init(build)
        .as_ref()
        .map_err(|e| KernelError::value(e.clone()))
}

/// Run `f` inside the kernel pool so its rayon iterators use that pool's threads.
pub fn install<T: Send>(f: impl FnOnce() -> KResult<T> + Send) -> KResult<T> {
    pool()?.install(f)
}

/// Number of threads of the kernel pool.
pub fn num_threads() -> KResult<usize> {
    Ok(pool()?.current_num_threads())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_env_values() {
        assert_eq!(parse_num_threads(Some("3")), Ok(3));
        assert_eq!(parse_num_threads(Some(" 2 ")), Ok(2));
        assert!(parse_num_threads(None).unwrap() >= 1);
        assert!(parse_num_threads(Some("")).unwrap() >= 1);
        assert!(parse_num_threads(Some("0")).is_err());
        assert!(parse_num_threads(Some("many")).is_err());
    }

    #[test]
    fn install_runs_closure() {
        assert_eq!(install(|| Ok(41 + 1)), Ok(42));
        assert!(num_threads().unwrap() >= 1);
    }
}
