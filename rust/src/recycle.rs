//! Big byte buffers that come back when Arrow is done with them, so their pages stay mapped for the next batch.
//!
//! Why: a reader batch's body bytes (16 MiB and up) are written once into a buffer that was just allocated.
//! glibc serves an allocation that size with fresh `mmap` pages and unmaps it on `free`, so every batch paid a
//! page fault (and the kernel's zeroing) per 4 KiB written: measured on the plain 42 MB CommonCrawl file of
//! `benchmarks/bench_warc_read.py`, 8,183 minor faults and ~0.03 CPU s a read, against 0.011 s and no faults
//! for a bare FastWARC loop, which reuses its buffer. Whether glibc happened to reuse a freed block depended
//! on what else the process had allocated, so the same read took 0.013 s or 0.030 s from run to run.
//!
//! A buffer handed to Arrow by [`Pool::lend`] is owned by a `Returned`; when the last Arrow array using it
//! is released (in Rust or, through the C data interface, by pyarrow), the buffer goes back to a small
//! process-wide pool instead of to `free`. [`Pool::take`] hands out the smallest pooled buffer big enough.
//! The pool holds at most [`KEEP_BYTES`] (a few batches in flight and a read buffer); a buffer over
//! [`MAX_BYTES`] (a batch with one huge record) is freed as before, so memory held idle stays bounded.

use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use arrow_buffer::Buffer;

/// Bytes of capacity the pool may hold while no one uses them.
pub const KEEP_BYTES: usize = 80 << 20;
/// Buffers bigger than this are freed, not kept.
pub const MAX_BYTES: usize = 40 << 20;

/// The process-wide pool the readers use.
pub static POOL: Pool = Pool::new(KEEP_BYTES, MAX_BYTES);

/// Idle buffers, at most `keep` bytes of them, none over `max`.
pub struct Pool {
    bufs: Mutex<Vec<Vec<u8>>>,
    keep: usize,
    max: usize,
}

impl Pool {
    pub const fn new(keep: usize, max: usize) -> Self {
        Pool {
            bufs: Mutex::new(Vec::new()),
            keep,
            max,
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Vec<Vec<u8>>> {
        // a panic while holding the lock leaves a valid Vec of buffers: keep using it
        self.bufs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An empty buffer with room for at least `capacity` bytes: the smallest pooled one that fits, else new.
    pub fn take(&self, capacity: usize) -> Vec<u8> {
        let mut held = self.held();
        let fit = held
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= capacity)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i);
        let buf = fit.map(|i| held.swap_remove(i));
        drop(held);
        buf.unwrap_or_else(|| Vec::with_capacity(capacity))
    }

    /// Keep `buf` for a later [`Pool::take`] (or free it when it is too big or the pool is full).
    pub fn give(&self, mut buf: Vec<u8>) {
        let cap = buf.capacity();
        if cap == 0 || cap > self.max {
            return;
        }
        buf.clear();
        let mut held = self.held();
        let kept: usize = held.iter().map(Vec::capacity).sum();
        if kept + cap <= self.keep {
            held.push(buf);
        }
    }

    /// Bytes of capacity held now.
    pub fn held_bytes(&self) -> usize {
        self.held().iter().map(Vec::capacity).sum()
    }

    /// `buf`'s bytes as an Arrow buffer, without a copy; the allocation comes back here when Arrow drops it.
    pub fn lend(&'static self, mut buf: Vec<u8>) -> Buffer {
        let len = buf.len();
        // A Vec's pointer is never null (dangling but aligned when it holds nothing), and moving the Vec into
        // its owner below does not move its heap allocation.
        let ptr = NonNull::new(buf.as_mut_ptr()).expect("a Vec's pointer is never null");
        let owner = Arc::new(Returned(buf, self));
        // SAFETY: `ptr` points at `len` initialised bytes of the allocation `owner` keeps alive and never
        // touches until it is dropped, which Arrow does only once the last array using the buffer is released.
        unsafe { Buffer::from_custom_allocation(ptr, len, owner) }
    }
}

/// The owner of a buffer lent to Arrow: dropping it (Arrow's release) gives the buffer back to its pool.
struct Returned(Vec<u8>, &'static Pool);

impl Drop for Returned {
    fn drop(&mut self) {
        self.1.give(std::mem::take(&mut self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static TEST: Pool = Pool::new(4 << 20, 2 << 20);

    #[test]
    fn a_buffer_comes_back_when_arrow_drops_it_and_the_pool_stays_bounded() {
        let mut v = TEST.take(1 << 20);
        v.extend_from_slice(b"hello");
        let addr = v.as_ptr() as usize;
        let b = TEST.lend(v);
        assert_eq!(b.as_slice(), b"hello");
        let c = b.clone();
        drop(b);
        assert_eq!(c.as_slice(), b"hello", "still lent while a clone lives");
        drop(c);
        assert_eq!(TEST.held_bytes(), 1 << 20);
        let again = TEST.take(1000);
        assert_eq!(
            again.as_ptr() as usize,
            addr,
            "the same allocation comes back"
        );
        assert!(again.is_empty());
        TEST.give(Vec::with_capacity((2 << 20) + 1)); // too big: freed
        assert_eq!(TEST.held_bytes(), 0);
        for _ in 0..8 {
            TEST.give(Vec::with_capacity(2 << 20));
        }
        assert_eq!(TEST.held_bytes(), 4 << 20, "two of the eight kept");
        assert_eq!(
            TEST.take(3 << 20).capacity(),
            3 << 20,
            "none fits: a new one"
        );
        assert_eq!(TEST.take(1).capacity(), 2 << 20);
    }
}
