//! WARC reader kernel: the bytes of a `.warc` or `.warc.gz` (fed in chunks of any size, so local files, S3
//! and https streams all work) split into records and columns, with every byte accounted for.
//!
//! [`Scanner::feed`] inflates gzip members ([`gz`]), parses each record's WARC and HTTP headers ([`header`])
//! and appends the records asked for to Arrow columns ([`batch`]); a record is parsed once it is whole in the
//! buffer (its header block and `Content-Length` bytes), so a record split across chunks, a header split
//! across chunks, and several records in one gzip member need no special case. Bytes that are not whole
//! records end the scan with `damage`: the file offset (the record's own, or its gzip member's) and why, in
//! the words the Python reader (`mdf_text.io.warc`) used, so a damaged file is never silently short.
//!
//! Why here and not FastWARC from Python: FastWARC's own loop costs as much as the whole of this scanner,
//! and the Python loop that moved its fields into columns cost as much again (`benchmarks/bench_warc_read.py`).

pub mod batch;
pub mod ctype;
mod feed;
pub mod gz;
pub mod header;
#[cfg(test)]
mod tests;
pub mod whole;

use std::collections::HashSet;

use arrow_array::StructArray;

use self::batch::{Batch, Row};
use self::gz::Inflater;
use self::header::{Fields, MAX_HEADER};
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
}

/// Why a scan of the buffer stopped.
enum Step {
    /// The next record is not whole yet: feed more.
    More,
    /// Every byte was read (at the end of the input).
    Done,
    /// Damage at `(offset, message)`.
    Damage(u64, String),
}

pub struct Scanner {
    cfg: Config,
    gz: Option<Inflater>,
    /// Compressed bytes of the last `feed_read` (kept for its capacity).
    input: Vec<u8>,
    buf: Vec<u8>,
    /// A local file's shard range, memory-mapped ([`feed`]): scanned in place when plain, else the
    /// compressed input; `map_end` bytes of it are fed so far.
    map: Option<memmap2::Mmap>,
    map_end: usize,
    /// Decoded position of `buf[0]`.
    buf_start: u64,
    pos: usize,
    eof: bool,
    /// File offset of the last record parsed, of any type, and how many before it shared that offset.
    last: Option<u64>,
    index: i32,
    /// Where the record after `last` should start: its block's end plus the CRLF CRLF that ends a record.
    last_end: u64,
    batch: Batch,
    ready: Vec<StructArray>,
    damage: Option<(u64, String)>,
    done: bool,
}

const FIRST_BATCH_BYTES: usize = 16 << 20;

impl Scanner {
    pub fn new(cfg: Config) -> Self {
        let gz = cfg.gzip.then(|| Inflater::new(cfg.base));
        let batch = Batch::new(cfg.batch_rows.min(1 << 16), FIRST_BATCH_BYTES);
        Scanner {
            cfg,
            gz,
            input: Vec::new(),
            buf: Vec::new(),
            map: None,
            map_end: 0,
            buf_start: 0,
            pos: 0,
            eof: false,
            last: None,
            index: 0,
            last_end: 0,
            batch,
            ready: Vec::new(),
            damage: None,
            done: false,
        }
    }

    /// True once the scan has ended (the input's end, or damage): later input is ignored.
    pub fn done(&self) -> bool {
        self.done
    }

    /// `(file offset, message)` of the damage that ended the scan, if any.
    pub fn damage(&self) -> Option<&(u64, String)> {
        self.damage.as_ref()
    }

    /// The batches completed so far (each `batch_rows` rows, or fewer at the end or the byte limit).
    pub fn take_batches(&mut self) -> Vec<StructArray> {
        std::mem::take(&mut self.ready)
    }

    fn scan_fed(&mut self, last: bool) {
        if let Some(g) = &self.gz {
            self.eof |= g.error.is_some(); // nothing after bad gzip data is read
        }
        self.eof |= last;
        let step = self.scan();
        let damage = match step {
            Step::More => return,
            Step::Done => self.gz.as_mut().and_then(|g| g.error.take()),
            Step::Damage(at, msg) => Some((at, msg)),
        };
        if self.batch.rows > 0 {
            let b = self.batch.finish();
            self.ready.push(b);
        }
        self.damage = damage;
        self.done = true;
        POOL.give(std::mem::take(&mut self.buf));
        POOL.give(std::mem::take(&mut self.input));
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

    /// The damage to report where the input ends early: the gzip stream's own error wins (the bytes were
    /// cut or bad there), else `msg` at `at`.
    fn cut(&mut self, at: u64, msg: String) -> Step {
        match self.gz.as_mut().and_then(|g| g.error.take()) {
            Some((at, msg)) => Step::Damage(at, msg),
            None => Step::Damage(at, msg),
        }
    }

    /// Bytes that are not a record: reported at the end of the last record (of its member, in a .warc.gz).
    fn unreadable(&self, why: &str) -> Step {
        let at = match (self.last, self.gz.is_some()) {
            (None, _) => self.cfg.base,
            (Some(last), true) => last,
            (Some(_), false) => self.last_end,
        };
        let after = self.last.map_or("None".to_owned(), |l| l.to_string());
        Step::Damage(
            at,
            format!("unreadable WARC data at byte {at} (after the record at byte {after}): {why}"),
        )
    }

    /// Parse every whole record in the buffer.
    fn scan(&mut self) -> Step {
        loop {
            // blank lines between records (any run of whitespace-only lines, as FastWARC skips)
            let rest = &view(&self.buf, &self.map, self.map_end, &self.gz)[self.pos..];
            let line_end = match memchr::memchr(b'\n', rest) {
                Some(k) => k + 1,
                None if !self.eof && rest.len() <= MAX_HEADER => return Step::More,
                None => rest.len(),
            };
            if rest.is_empty() {
                return Step::Done;
            }
            if rest[..line_end].trim_ascii().is_empty() {
                self.pos += line_end;
                continue;
            }
            if !header::is_version_line(&rest[..line_end]) {
                return self.unreadable("Invalid WARC header");
            }
            match self.record(line_end) {
                Some(step) => return step,
                None => continue,
            }
        }
    }

    /// The record whose version line (`first` bytes) starts at `pos`: appended or skipped (`None`: go on),
    /// or why the scan stops.
    fn record(&mut self, first: usize) -> Option<Step> {
        let at = self.pos;
        let rest = &view(&self.buf, &self.map, self.map_end, &self.gz)[at..];
        let window = &rest[..rest.len().min(MAX_HEADER + 4)];
        let Some(end) = header::block_end(window) else {
            if window.len() > MAX_HEADER {
                return Some(self.unreadable("Maximum header length exceeded."));
            }
            if !self.eof {
                return Some(Step::More);
            }
            let offset = self.file_offset(at);
            let msg =
                format!("truncated WARC header at byte {offset} (no end of the header block)");
            return Some(self.cut(offset, msg));
        };
        let fields = Fields::parse(&rest[first.min(end + 2)..end + 2]);
        let (kind, is_http, length) = fields.record_kind();
        let block = &rest[end + 4..];
        if block.len() < length && !self.eof {
            return Some(Step::More);
        }
        let block = &block[..block.len().min(length)];
        let http = if is_http {
            match header::http(block) {
                Some(h) => Some(h),
                None => return Some(self.unreadable("Maximum header length exceeded.")),
            }
        } else {
            None
        };
        let offset = self.file_offset(at);
        self.index = if self.last == Some(offset) {
            self.index + 1
        } else {
            0
        };
        self.last = Some(offset);
        self.last_end = offset + (end + 4 + length + 4) as u64;
        let truncated = block.len() < length;
        let ctype = match &http {
            Some(h) => h.fields.get("Content-Type").map(header::http_text),
            None => fields.get("Content-Type").map(header::warc_text),
        };
        if kind & self.cfg.wanted == 0 || !self.mime_wanted(ctype.as_deref()) {
            if truncated {
                let msg = format!(
                    "truncated WARC record at byte {offset}: {} of {length} bytes",
                    block.len()
                );
                return Some(self.cut(offset, msg));
            }
            self.pos = at + end + 4 + length;
            return None;
        }
        let skip = http.as_ref().map_or(0, |h| h.len);
        if truncated {
            let (got, want) = (block.len() - skip, length - skip);
            let msg = format!("truncated WARC record at byte {offset}: {got} of {want}");
            return Some(Step::Damage(offset, msg));
        }
        let body = &block[skip..];
        if self.batch.rows >= self.cfg.batch_rows
            || (self.batch.rows > 0
                && self.batch.body_bytes + body.len() > self.cfg.max_batch_bytes)
        {
            let next = self.batch.body_bytes + self.batch.body_bytes / 4;
            let done = std::mem::replace(
                &mut self.batch,
                Batch::new(
                    self.cfg.batch_rows.min(1 << 16),
                    next.max(FIRST_BATCH_BYTES),
                ),
            );
            let mut done = done;
            self.ready.push(done.finish());
        }
        let id = fields.get("WARC-Record-ID").map(header::warc_text);
        let url = fields.get("WARC-Target-URI").map(header::warc_text);
        let date = fields.get("WARC-Date").map(header::warc_text);
        let (status, chunked, encoding) = match &http {
            Some(h) => {
                let te = h.fields.get("Transfer-Encoding").map(header::http_text);
                let ce = h.fields.get("Content-Encoding").map(header::http_text);
                let chunked = te.is_some_and(|t| t.to_lowercase().ends_with("chunked"));
                (h.status, chunked, ce.filter(|c| !c.is_empty()))
            }
            None => (None, false, None),
        };
        self.batch.push(&Row {
            id: id.as_deref(),
            // WARC 1.0 examples wrap the URI in <>; an empty one is no URL
            url: url
                .as_deref()
                .filter(|u| !u.is_empty())
                .map(|u| u.trim_matches(['<', '>'])),
            date: date.as_deref(),
            warc_type: header::type_name(kind),
            status,
            content_type: ctype.as_deref(),
            body,
            offset,
            member_index: self.index,
            chunked,
            content_encoding: encoding.as_deref(),
        });
        self.pos = at + end + 4 + length;
        None
    }

    /// Does a record of Content-Type `ctype` pass the `mime_types` filter?
    fn mime_wanted(&self, ctype: Option<&str>) -> bool {
        let Some(exact) = &self.cfg.mime_exact else {
            return true;
        };
        let mime = ctype.map(|c| c.split(';').next().unwrap_or("").trim().to_lowercase());
        match mime.as_deref() {
            None | Some("") => false,
            Some(m) => {
                exact.contains(m)
                    || self
                        .cfg
                        .mime_prefixes
                        .iter()
                        .any(|p| m.starts_with(p.as_str()))
            }
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
    /// A scan stopped early (the reader closed mid-file) gives its buffers back too.
    fn drop(&mut self) {
        POOL.give(std::mem::take(&mut self.buf));
        POOL.give(std::mem::take(&mut self.input));
    }
}
