//! The records of the scanned bytes, one at a time, and what happens to each.
//!
//! * A whole record of a type asked for (and a mime type the filter passes) is a row.
//! * A record whose framing is whole but that cannot be read is a row *rejected* with a reason, and the scan
//!   goes on after it: `bad_http` (a response whose HTTP head has no status line, or an HTTP head longer than
//!   32 KiB), `bad_warc_header` (a WARC header block longer than 32 KiB, FastWARC's limit), `record_too_large`
//!   (a block longer than `max_record_bytes`: skipped as it streams past, never held whole).
//! * Bytes that are not a record are damage: bytes that do not start with a `WARC/1.x` line, a header without
//!   `Content-Length` (or one that is not a number), a header with no end within `max_record_bytes`. One
//!   damage entry each, then the scan looks for the next `WARC/1.x` line at a line start and goes on there.
//! * A record cut by the end of the input is damage; one cut by a bad gzip member ([`super::Edge::Cut`]) is
//!   covered by that member's damage and dropped.
//!
//! The Python reader's recovery walker (`mdf_text.io.warc_walk`) follows the same rules, word for word.

use super::batch::{Batch, Row};
use super::header::{self, Fields, MAX_HEADER};
use super::skip::Pending;
use super::{view, Edge, Scanner, Skip, Step, FIRST_BATCH_BYTES, STEP};

const RESPONSE: u32 = 4;
const VERSION_START: &[u8] = b"WARC/";

impl Scanner {
    /// Parse every whole record of the bytes readable now.
    pub(super) fn scan(&mut self) -> Step {
        loop {
            let (end, edge) = self.edge();
            if self.skip.is_some() {
                match self.skip_block(end, edge) {
                    Some(step) => return step,
                    None => continue,
                }
            }
            if let Some(from) = self.resync {
                match self.find_record(from, end, edge) {
                    Some(step) => return step,
                    None => continue,
                }
            }
            let rest = &view(&self.buf, &self.map, self.map_end, &self.gz)[self.pos..end];
            if rest.is_empty() {
                match edge {
                    Edge::Open => {
                        self.need = 1;
                        return Step::More;
                    }
                    Edge::Eof => return Step::Done,
                    Edge::Cut => {
                        self.pass_cut();
                        continue;
                    }
                }
            }
            // blank lines between records (any run of whitespace-only lines, as FastWARC skips)
            let line_end = match memchr::memchr(b'\n', rest) {
                Some(k) => k + 1,
                None if edge == Edge::Open && rest.len() <= MAX_HEADER => {
                    self.need = rest.len() + 1;
                    return Step::More;
                }
                None if edge == Edge::Cut && !rest.trim_ascii().is_empty() => {
                    self.pos = end; // the start of a line the bad member's damage covers
                    continue;
                }
                None => rest.len(),
            };
            if rest[..line_end].trim_ascii().is_empty() {
                self.pos += line_end;
                continue;
            }
            if !header::is_version_line(&rest[..line_end]) {
                self.unreadable("Invalid WARC header");
                continue;
            }
            if let Some(step) = self.record(line_end, end, edge) {
                return step;
            }
        }
    }

    pub(super) fn damage(&mut self, at: u64, msg: String) {
        self.damages.push((at, msg));
    }

    /// Bytes that are no record at `pos`: damage at the end of the last record (plain) or at the member holding
    /// them (gzip), then look for the next record.
    fn unreadable(&mut self, why: &str) {
        let at = match (self.last, self.gz.is_some()) {
            (_, true) => self.file_offset(self.pos),
            (None, false) => self.cfg.base,
            (Some(_), false) => self.last_end,
        };
        let after = self.last.map_or("None".to_owned(), |l| l.to_string());
        let msg = format!("unreadable WARC data at byte {at} (after the record at byte {after}): {why}");
        self.damage(at, msg);
        self.resync = Some(self.pos + 1);
    }

    /// Look for a `WARC/1.x` line at a line start from `from`; `None`: found (the scan goes on there), or the
    /// bytes ran out at the input's end or a cut.
    fn find_record(&mut self, from: usize, end: usize, edge: Edge) -> Option<Step> {
        let v = view(&self.buf, &self.map, self.map_end, &self.gz);
        let mut i = from;
        while let Some(k) = memchr::memmem::find(&v[i.min(end)..end], VERSION_START) {
            let c = i + k;
            let line_start = if c == 0 {
                self.buf_start == 0
            } else {
                v[c - 1] == b'\n'
            };
            let line = memchr::memchr(b'\n', &v[c..end]);
            match line {
                Some(l) if line_start && header::is_version_line(&v[c..=c + l]) => {
                    self.pos = c;
                    self.resync = None;
                    if self.gz.is_none() {
                        self.last_end = self.file_offset(c); // where the next record starts after all
                    }
                    return None;
                }
                None if line_start && edge == Edge::Open && end - c <= MAX_HEADER => {
                    self.pos = self.pos.max(c.saturating_sub(1));
                    self.resync = Some(c);
                    self.need = end - c + 1;
                    return Some(Step::More);
                }
                _ => i = c + 1,
            }
        }
        if edge == Edge::Open {
            // keep what may be the start of a version line, and the byte before it
            let r = end.saturating_sub(VERSION_START.len()).max(i.min(end));
            self.pos = self.pos.max(r.saturating_sub(1));
            self.resync = Some(r);
            self.need = STEP;
            return Some(Step::More);
        }
        self.pos = end; // a cut's next member starts with a record: the scan goes on there
        self.resync = None;
        None
    }

    /// The record whose version line (`first` bytes) starts at `pos`, read from bytes ending at `end`:
    /// appended, rejected, skipped or damage (`None`: go on), or the scan must wait.
    fn record(&mut self, first: usize, end: usize, edge: Edge) -> Option<Step> {
        let at = self.pos;
        let cap = self.cfg.max_record_bytes;
        let limit = cap.max(MAX_HEADER);
        let v = view(&self.buf, &self.map, self.map_end, &self.gz);
        let rest = &v[at..end];
        let hend = match header::block_end(&rest[..rest.len().min(limit + 4)]) {
            Some(e) => e,
            None if rest.len() > limit => {
                let offset = self.file_offset(at);
                let msg = format!("WARC header at byte {offset} has no end within {limit} bytes");
                self.damage(offset, msg);
                self.resync = Some(at + first);
                return None;
            }
            None => {
                return self.short(end, edge, limit + 4, |offset| {
                    format!("truncated WARC header at byte {offset} (no end of the header block)")
                })
            }
        };
        let fields = Fields::parse(&rest[first.min(hend + 2)..hend + 2]);
        let (kind, is_http, length) = fields.record_kind();
        let Some(length) = length else {
            let offset = self.file_offset(at);
            self.damage(
                offset,
                format!("WARC record at byte {offset} has no valid Content-Length"),
            );
            self.resync = Some(at + hend + 4);
            return None;
        };
        let block_at = hend + 4;
        let avail = rest.len() - block_at;
        let wanted = kind & self.cfg.wanted != 0;
        let (oversized, too_large) = (hend > MAX_HEADER, length > cap);
        // a record too long to hold is skipped as it streams; only its HTTP head is read, for the mime filter
        let need = if oversized || too_large {
            if is_http {
                length.min(MAX_HEADER + 4)
            } else {
                0
            }
        } else {
            length
        };
        if avail < need {
            if edge == Edge::Eof {
                let offset = self.file_offset(at);
                let block = &rest[block_at..];
                let msg = self.truncated(offset, &fields, block, length, wanted);
                self.damage(offset, msg);
                self.pos = end;
                return None;
            }
            return self.short(end, edge, block_at + need, |_| String::new());
        }
        let block = &rest[block_at..block_at + need];
        let http = if is_http { header::http(block) } else { None };
        let ctype = match &http {
            Some(h) => h.fields.get("Content-Type").map(header::http_text),
            None if is_http => None,
            None => fields.get("Content-Type").map(header::warc_text),
        };
        let long_head = is_http && http.is_none();
        let keep = wanted && (long_head || self.mime_wanted(ctype.as_deref()));
        let offset = self.file_offset(at);
        self.index = if self.last == Some(offset) {
            self.index + 1
        } else {
            0
        };
        self.last = Some(offset);
        self.last_end = offset + (block_at + length + 4) as u64;
        let status = http.as_ref().and_then(|h| h.status);
        let (reason, detail) = if too_large {
            let d = format!("record block of {length} bytes, over max_record_bytes ({cap})");
            (Some("record_too_large"), d)
        } else if oversized {
            let d = format!("WARC header block of {} bytes, over {MAX_HEADER}", hend + 4);
            (Some("bad_warc_header"), d)
        } else if long_head {
            let d = format!("HTTP header block longer than {MAX_HEADER} bytes");
            (Some("bad_http"), d)
        } else if kind == RESPONSE && is_http && !status.is_some_and(|s| (100..=999).contains(&s)) {
            (Some("bad_http"), "no HTTP status line".to_owned())
        } else {
            (None, String::new())
        };
        // the row's text fields, only for a record that is a row (most records a crawl holds are not asked for)
        let text = |key: &str| fields.get(key).map(header::warc_text);
        let url_of = |u: &std::borrow::Cow<'_, str>| -> Option<String> {
            // WARC 1.0 examples wrap the URI in <>; an empty one is no URL
            (!u.is_empty()).then(|| u.trim_matches(['<', '>']).to_owned())
        };
        if oversized || too_large {
            let row = keep.then(|| Pending {
                id: text("WARC-Record-ID").map(|t| t.into_owned()),
                url: text("WARC-Target-URI").as_ref().and_then(url_of),
                date: text("WARC-Date").map(|t| t.into_owned()),
                warc_type: header::type_name(kind),
                status,
                content_type: ctype.as_deref().map(str::to_owned),
                offset,
                member_index: self.index,
                reason: reason.expect("a reason"),
                detail,
            });
            let length = length as u64;
            self.skip = Some(Skip {
                left: length,
                offset,
                length,
                row,
            });
            self.pos = at + block_at;
            return None;
        }
        self.pos = at + block_at + length;
        if !keep {
            return None;
        }
        let (id, date) = (text("WARC-Record-ID"), text("WARC-Date"));
        let url = text("WARC-Target-URI");
        let url = url.as_deref().filter(|u| !u.is_empty()).map(|u| u.trim_matches(['<', '>']));
        let (chunked, encoding) = match &http {
            Some(h) => {
                let te = h.fields.get("Transfer-Encoding").map(header::http_text);
                let ce = h.fields.get("Content-Encoding").map(header::http_text);
                let chunked = te.is_some_and(|t| t.to_lowercase().ends_with("chunked"));
                (chunked, ce.filter(|c| !c.is_empty()))
            }
            None => (false, None),
        };
        let body = if long_head {
            &block[..0]
        } else {
            &block[http.as_ref().map_or(0, |h| h.len)..]
        };
        let row = Row {
            id: id.as_deref(),
            url,
            date: date.as_deref(),
            warc_type: header::type_name(kind),
            status,
            content_type: ctype.as_deref(),
            body,
            offset,
            member_index: self.index,
            chunked,
            content_encoding: encoding.as_deref(),
            reason,
            detail: reason.map(|_| detail.as_str()),
        };
        push(&mut self.batch, &mut self.ready, &self.cfg, &row);
        None
    }

    /// Why a record cut by the input's end is damage: its body bytes out of the body's length when it is one
    /// the reader would return, else its block's bytes (the words of the FastWARC path).
    fn truncated(&self, offset: u64, fields: &Fields<'_>, block: &[u8], length: usize, wanted: bool) -> String {
        let (_, is_http, _) = fields.record_kind();
        let http = if is_http { header::http(block) } else { None };
        let ctype = match &http {
            Some(h) => h.fields.get("Content-Type").map(header::http_text),
            None => fields.get("Content-Type").map(header::warc_text),
        };
        if !wanted || !self.mime_wanted(ctype.as_deref()) {
            return format!(
                "truncated WARC record at byte {offset}: {} of {length} bytes",
                block.len()
            );
        }
        let skip = http.as_ref().map_or(0, |h| h.len);
        let (got, want) = (block.len().saturating_sub(skip), length.saturating_sub(skip));
        format!("truncated WARC record at byte {offset}: {got} of {want}")
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

/// Append `row` to the batch, first handing the batch over when it is full (rows, or body bytes).
pub(super) fn push(batch: &mut Batch, ready: &mut Vec<arrow_array::StructArray>, cfg: &super::Config, row: &Row<'_>) {
    if batch.rows >= cfg.batch_rows
        || (batch.rows > 0 && batch.body_bytes + row.body.len() > cfg.max_batch_bytes)
    {
        let next = batch.body_bytes + batch.body_bytes / 4;
        let rows = cfg.batch_rows.min(1 << 16);
        let mut done = std::mem::replace(batch, Batch::new(rows, next.max(FIRST_BATCH_BYTES)));
        ready.push(done.finish());
    }
    batch.push(row);
}
