//! The bytes of a model file (memory-mapped, or owned for tests and small files) and a little-endian cursor
//! over them that turns running past the end into one error naming what was being read.

use std::fs::File;
use std::ops::Deref;

use memmap2::Mmap;

use crate::error::{KResult, KernelError};

/// A whole model file: mapped read-only (the processes of a machine share its pages), or in memory.
#[derive(Debug)]
pub enum Backing {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl Backing {
    /// Map `path`. The file must not change while the model is in use (as with any memory-mapped file);
    /// fastText writes a model once, with `save_model`, and the operator keys its cache on size and mtime.
    pub fn map(path: &str) -> KResult<Self> {
        let file = File::open(path)
            .map_err(|e| KernelError::value(format!("cannot open {path:?}: {e}")))?;
        // SAFETY: the mapping is read-only and private to this process; see the caveat above.
        let map = unsafe { Mmap::map(&file) }
            .map_err(|e| KernelError::value(format!("cannot map {path:?}: {e}")))?;
        Ok(Self::Mapped(map))
    }
}

impl Deref for Backing {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Self::Mapped(m) => m,
            Self::Owned(v) => v,
        }
    }
}

/// A cursor over the file's bytes.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    /// How many of `count` items of at least `each` bytes the rest of the file can hold: `count` itself, or an
    /// error naming `what` when the file is too short for them. Every reservation sized by a count read from
    /// the file goes through this, so a damaged or hostile header (a 100-byte file claiming 2^31 entries)
    /// fails here in one line instead of reserving gigabytes, which aborts the process when the allocation
    /// is refused.
    pub fn fits(&self, count: u64, each: usize, what: &str) -> KResult<usize> {
        let left = (self.buf.len() - self.pos) as u64;
        match count.checked_mul(each as u64) {
            Some(need) if need <= left => Ok(count as usize),
            _ => Err(KernelError::value(format!(
                "damaged model file: {count} {what} of at least {each} bytes each claimed at byte {}, \
                 but only {left} bytes follow",
                self.pos
            ))),
        }
    }

    /// The next `n` bytes; `what` names them if the file ends first.
    pub fn bytes(&mut self, n: usize, what: &str) -> KResult<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let Some(end) = end else {
            return Err(KernelError::value(format!(
                "damaged model file: cut short in its {what} (at byte {} of {})",
                self.pos,
                self.buf.len()
            )));
        };
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> KResult<[u8; N]> {
        let b = self.bytes(N, "header")?;
        Ok(b.try_into().expect("N bytes"))
    }

    pub fn u8(&mut self) -> KResult<u8> {
        Ok(self.array::<1>()?[0])
    }

    pub fn i32(&mut self) -> KResult<i32> {
        Ok(i32::from_le_bytes(self.array()?))
    }

    pub fn i64(&mut self) -> KResult<i64> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    pub fn f64(&mut self) -> KResult<f64> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    /// Bytes up to a NUL (which is consumed, not returned): a dictionary entry's word.
    pub fn cstr(&mut self) -> KResult<&'a [u8]> {
        let rest = &self.buf[self.pos..];
        let Some(n) = rest.iter().position(|&b| b == 0) else {
            return self.bytes(rest.len() + 1, "dictionary");
        };
        let out = &rest[..n];
        self.pos += n + 1;
        Ok(out)
    }
}
