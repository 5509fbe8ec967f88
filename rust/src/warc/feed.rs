//! How bytes reach the [`Scanner`]: fed from Python (S3 and https streams), read from a local file in pieces,
//! or mapped from a local file and scanned in place.
//!
//! Why a map for local files: a read copies every byte from the page cache into the scan buffer, and the
//! bodies are then copied again into the batch. Scanning the mapped page cache drops the first copy, which
//! was the biggest single cost of a plain WARC: the kernel's copy was 20-24 % of the reader's CPU on the 42 MB
//! CommonCrawl file of `benchmarks/bench_warc_read.py` (`perf`), as much as the bodies' own copy. A gzip
//! file is mapped too, and its members inflated from the map.
//!
//! Why only on a local disk filesystem ([`mappable`]): a read error in a mapped page (a network or FUSE
//! filesystem losing its server) is a SIGBUS that kills the process, where `read` returns an error the
//! reader reports in one line. So NFS, FUSE mounts and anything not known to be a local disk keep the read
//! path. A local file truncated by another process while it is read is the one case left that a map turns
//! from a reported damage into a SIGBUS; the reader's shards are planned from sizes listed before the run,
//! and a file rewritten under a running pipeline is not a case the reader supports either way.

use std::fs::File;
use std::io::Read;

use memmap2::{Advice, MmapOptions};

use super::Scanner;
use crate::recycle::POOL;

/// Bytes per read of [`Scanner::feed_read`]: a few hundred KiB fit the core's L2 cache.
const SUB_READ: usize = 256 << 10;

impl Scanner {
    /// Feed the next bytes of the input; `last`: they are its end.
    pub fn feed(&mut self, data: &[u8], last: bool) {
        if self.done {
            return;
        }
        self.compact();
        self.room(data.len());
        match &mut self.gz {
            Some(g) => g.push(data, last),
            None => self.buf.extend_from_slice(data),
        }
        self.scan_fed(last);
    }

    /// Feed up to `n` bytes read from `r` (a local file: read straight into the scan buffer, no copy through
    /// Python); `last`: they end the input. Returns how many were read; fewer than `n` also ends the input.
    ///
    /// Read and scanned [`SUB_READ`] bytes at a time: each piece is still in the CPU cache when its bodies are
    /// copied out, where a 4 MiB read went to memory and was read back from it.
    pub fn feed_read(&mut self, r: &mut impl Read, n: usize, last: bool) -> std::io::Result<usize> {
        let mut total = 0;
        loop {
            if self.done {
                return Ok(total);
            }
            let want = SUB_READ.min(n - total);
            let got = self.read_some(r, want, last && total + want == n)?;
            total += got;
            let end = got < want || (last && total == n);
            self.scan_fed(end);
            if end || total == n {
                return Ok(total);
            }
        }
    }

    /// Read up to `n` bytes of `r` onto the scan buffer (inflated when gzip); `last`: `n` bytes end the input.
    fn read_some(&mut self, r: &mut impl Read, n: usize, last: bool) -> std::io::Result<usize> {
        self.compact();
        self.room(n);
        Ok(match &mut self.gz {
            Some(g) => g.read_from(r, n, last)?,
            None => r.take(n as u64).read_to_end(&mut self.buf)?,
        })
    }

    /// The scan buffer, from the recycling pool at the first feed (see `crate::recycle`: a new one is faulted
    /// in page by page): room for twice the fed bytes, or what the inflater releases in a step.
    fn room(&mut self, fed: usize) {
        if self.buf.capacity() == 0 {
            self.buf = POOL.take(if self.gz.is_some() { 4 << 20 } else { fed * 2 });
        }
    }

    pub(super) fn compact(&mut self) {
        if self.pos > 0 && !self.scans_map() {
            self.buf.drain(..self.pos);
            self.buf_start += self.pos as u64;
            if let Some(r) = &mut self.resync {
                *r -= self.pos;
            }
            self.pos = 0;
        }
    }

    /// Map bytes `start..stop` of the local `file` to scan with [`Scanner::advance`]; false (nothing mapped)
    /// when its filesystem is not a local disk, then the caller reads it with [`Scanner::feed_read`]. A file
    /// shorter than `stop` now is mapped to its end, and the scan reports the record it cuts.
    pub fn map_file(&mut self, file: &File, start: u64, stop: u64) -> std::io::Result<bool> {
        if !mappable(file) {
            return Ok(false);
        }
        let stop = stop.min(file.metadata()?.len());
        self.map_end = 0;
        self.map = if stop > start {
            // SAFETY: a read-only map of a file on a local disk (see the module's note on truncation)
            let map = unsafe {
                MmapOptions::new()
                    .offset(start)
                    .len((stop - start) as usize)
                    .map(file)?
            };
            // the kernel reads ahead further, and drops pages behind, on a sequential scan
            let _ = map.advise(Advice::Sequential);
            Some(map)
        } else {
            None
        };
        Ok(true)
    }

    /// Scan the next `n` bytes of the mapped range (inflated first when gzip, [`SUB_READ`] bytes at a time,
    /// as [`Scanner::feed_read`] reads); the last ones end the input.
    pub fn advance(&mut self, n: usize) {
        let total = self.map.as_ref().map_or(0, |m| m.len());
        let stop = (self.map_end + n).min(total);
        loop {
            if self.done {
                return;
            }
            let (from, to) = (self.map_end, (self.map_end + SUB_READ).min(stop));
            self.map_end = to;
            if self.gz.is_some() {
                self.compact();
                self.room(to - from);
                let data: &[u8] = self.map.as_ref().map_or(&[], |m| &m[from..to]);
                if let Some(g) = &mut self.gz {
                    g.push(data, to == total); // an empty range too: it ends the input
                }
            }
            self.scan_fed(to == total);
            if to == stop {
                return;
            }
        }
    }
}

/// Is `file` on a local disk filesystem (where a mapped page cannot fail to read in a way `read` would report)?
fn mappable(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // statfs(2) magic numbers (linux/magic.h): ext2/3/4, xfs, btrfs, tmpfs, overlayfs, f2fs, zfs
    const LOCAL: [i64; 7] = [
        0xEF53,
        0x5846_5342,
        0x9123_683E,
        0x0102_1994,
        0x794C_7630,
        0xF2F5_2010,
        0x2FC1_2FC1,
    ];
    let mut st = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: `st` is a valid statfs buffer and the descriptor is open for the call's duration.
    if unsafe { libc::fstatfs(file.as_raw_fd(), st.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: fstatfs succeeded, so it filled `st`.
    #[allow(clippy::unnecessary_cast)] // f_type is i64 on x86-64 glibc, another integer elsewhere
    let kind = unsafe { st.assume_init() }.f_type as i64;
    LOCAL.contains(&kind)
}
