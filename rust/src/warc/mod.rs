//! WARC reader kernel: the bytes of a `.warc` or `.warc.gz` (fed in chunks of any size, so local files, S3
//! and https streams all work) split into records and columns, with every byte accounted for.
//!
//! [`Scanner::feed`] inflates gzip members ([`gz`]), parses each record's WARC and HTTP headers ([`header`])
//! and appends the records asked for to Arrow columns ([`batch`]); a record is parsed once it is whole in the
//! buffer (its header block and `Content-Length` bytes), so a record split across chunks, a header split
//! across chunks, and several records in one gzip member need no special case ([`record`] has the rules).
//!
//! Damage costs what is damaged, not the rest of the file. Bytes that are not whole records are one entry of
//! `damages` (the file offset: the record's own, or its gzip member's, and why, in the words the Python reader
//! `mdf_text.io.warc` uses), and the scan goes on at the next record: a bad gzip member at the next good member
//! ([`gz`]), a record without `Content-Length` or bytes that are no record at the next `WARC/1.x` line. A
//! record whose framing is whole but that cannot be read is one row rejected with a reason: an HTTP head that
//! is no response (`bad_http`), a header block longer than FastWARC's 32 KiB (`bad_warc_header`), a block
//! longer than `max_record_bytes` (`record_too_large`, skipped without being held in memory).
//!
//! Why here and not FastWARC from Python: FastWARC's own loop costs as much as the whole of this scanner,
//! and the Python loop that moved its fields into columns cost as much again (`benchmarks/bench_warc_read.py`).

pub mod batch;
pub mod ctype;
mod feed;
pub mod gz;
pub mod header;
mod record;
mod skip;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_damage;
pub mod whole;

use std::collections::HashSet;

use arrow_array::StructArray;

use self::batch::Batch;
use self::gz::Inflater;
use crate::recycle::POOL;

/// What to read and how to cut batches.
pub struct Config {
    pub gzip: bool,
    /// File offset of the first byte fed (a shard's start).
    pub base: u64,
    /// Mask of WARC-Type bits to keep (see [`header::TYPES`]).
    pub wanted: u32,
    /// Keep records whose mime type is one of these (lower case) ...
    pub mime_exact: Option<HashSet<String>>,
    /// ... or starts with one of these (`text/` for `text/*`); `mime_exact: None` keeps every type.
    pub mime_prefixes: Vec<String>,
    pub batch_rows: usize,
    pub max_batch_bytes: usize,
    /// A record block longer than this is rejected (`record_too_large`) and skipped, never held whole.
    pub max_record_bytes: usize,
}

/// Why a scan of the buffer stopped.
enum Step {
    /// The next record is not whole yet: feed more.
    More,
    /// Every byte was read (at the end of the input).
    Done,
}

/// Where the bytes readable for the record at the scan position end.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Edge {
    /// More bytes may come.
    Open,
    /// The input ends there.
    Eof,
    /// A bad gzip member's bytes were dropped there: a record running past it is cut (its member's damage
    /// covers it) and the next one starts there.
    Cut,
}

/// A record being skipped (too long to hold): the block bytes left, and its rejected row when it was asked for.
struct Skip {
    left: u64,
    offset: u64,
    length: u64,
    row: Option<skip::Pending>,
}

pub struct Scanner {
    cfg: Config,
    gz: Option<Inflater>,
    buf: Vec<u8>,
    /// A local file's shard range, memory-mapped ([`feed`]): scanned in place when plain, else the
    /// compressed input; `map_end` bytes of it are fed so far.
    map: Option<memmap2::Mmap>,
    map_end: usize,
    /// Decoded position of `buf[0]`.
    buf_start: u64,
    pos: usize,
    eof: bool,
    /// Bytes past `pos` the scan waits for (what the inflater is asked to release).
    need: usize,
    /// File offset of the last record parsed, of any type, and how many before it shared that offset.
    last: Option<u64>,
    index: i32,
    /// Where the record after `last` should start: its block's end plus the CRLF CRLF that ends a record.
    last_end: u64,
    /// Looking for the next `WARC/1.x` line from this index of the bytes scanned (after damage).
    resync: Option<usize>,
    skip: Option<Skip>,
    batch: Batch,
    ready: Vec<StructArray>,
    damages: Vec<(u64, String)>,
    done: bool,
}

const FIRST_BATCH_BYTES: usize = 16 << 20;
/// Decoded bytes asked of the inflater beyond what the scan needs, so it inflates in steps worth a scan.
const STEP: usize = 1 << 20;

impl Scanner {
    pub fn new(cfg: Config) -> Self {
        let gz = cfg.gzip.then(|| Inflater::new(cfg.base));
        let batch = Batch::new(cfg.batch_rows.min(1 << 16), FIRST_BATCH_BYTES);
        Scanner {
            cfg,
            gz,
            buf: Vec::new(),
            map: None,
            map_end: 0,
            buf_start: 0,
            pos: 0,
            eof: false,
            need: 0,
            last: None,
            index: 0,
            last_end: 0,
            resync: None,
            skip: None,
            batch,
            ready: Vec::new(),
            damages: Vec::new(),
            done: false,
        }
    }

    /// True once the scan has ended (the input's end): later input is ignored.
    pub fn done(&self) -> bool {
        self.done
    }

    /// `(file offset, message)` of each damaged part of the input, in file order.
    pub fn damages(&self) -> &[(u64, String)] {
        &self.damages
    }

    /// The batches completed so far (each `batch_rows` rows, or fewer at the end or the byte limit).
    pub fn take_batches(&mut self) -> Vec<StructArray> {
        std::mem::take(&mut self.ready)
    }

    /// Scan what was fed (`last`: the input ends with it), inflating gzip members as the scan needs them.
    fn scan_fed(&mut self, last: bool) {
        loop {
            let stalled = match &mut self.gz {
                Some(g) => {
                    let target = self.buf_start + (self.pos + self.need.max(STEP)) as u64;
                    let released = g.released;
                    let stalled = g.pump(&mut self.buf, target);
                    self.damages.append(&mut g.errors);
                    self.eof = g.finished();
                    stalled || g.released == released
                }
                None => {
                    self.eof |= last;
                    true
                }
            };
            match self.scan() {
                Step::Done => break,
                Step::More if stalled && !self.eof => return,
                Step::More if stalled => break, // nothing more can come (the scan ends at the input's end)
                Step::More => self.compact(),
            }
        }
        if self.batch.rows > 0 {
            let b = self.batch.finish();
            self.ready.push(b);
        }
        self.damages.sort_by_key(|d| d.0); // the inflater finds bad members before the scan reaches them
        self.done = true;
        POOL.give(std::mem::take(&mut self.buf));
        self.map = None;
    }

    /// True when the bytes scanned are the mapped file itself (a plain WARC), not the scan buffer.
    fn scans_map(&self) -> bool {
        self.map.is_some() && self.gz.is_none()
    }

    fn file_offset(&self, pos: usize) -> u64 {
        let decoded = self.buf_start + pos as u64;
        match &self.gz {
            Some(g) => g.member_of(decoded),
            None => self.cfg.base + decoded,
        }
    }

    /// Where the bytes readable for the record at `pos` end, and why there.
    fn edge(&self) -> (usize, Edge) {
        let end = match (&self.map, &self.gz) {
            (Some(_), None) => self.map_end,
            (_, Some(g)) => (g.released - self.buf_start) as usize,
            _ => self.buf.len(),
        };
        if let Some(&c) = self.gz.as_ref().and_then(|g| g.cuts.front()) {
            return ((c - self.buf_start) as usize, Edge::Cut);
        }
        (end, if self.eof { Edge::Eof } else { Edge::Open })
    }

    /// Passed the cut at `pos`: the next bytes come from the member after the bad one.
    fn pass_cut(&mut self) {
        if let Some(g) = &mut self.gz {
            g.cuts.pop_front();
        }
    }
}

/// The bytes to scan: the fed part of a mapped plain file, else the scan buffer. A function of the fields, not
/// a method, so the batch being built can be borrowed mutably beside it.
fn view<'a>(
    buf: &'a [u8],
    map: &'a Option<memmap2::Mmap>,
    end: usize,
    gz: &Option<Inflater>,
) -> &'a [u8] {
    match (map, gz) {
        (Some(m), None) => &m[..end],
        _ => buf,
    }
}

impl Drop for Scanner {
    /// A scan stopped early (the reader closed mid-file) gives its buffer back too.
    fn drop(&mut self) {
        POOL.give(std::mem::take(&mut self.buf));
    }
}
