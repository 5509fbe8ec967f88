//! WARC and HTTP header blocks, read the way FastWARC 2.0 reads them, so this reader and the FastWARC one it
//! replaces give the same rows: lines end at CRLF, a line starting with a space or tab continues the previous
//! value (joined by one space), a line without a colon is dropped, keys and values are trimmed, and a lookup
//! is case-insensitive and takes the first occurrence.
//!
//! FastWARC's quirks kept on purpose (seen with FastWARC 2.0.1, pinned by the parity tests): the record's
//! type, HTTP flag and length come from the first `WARC-Type`, `Content-Type`, `Content-Length` keys spelled
//! exactly so, and the scan for them stops after three matches; an HTTP status line that does not read
//! `HTTP/x <number>` has no status. One quirk is not kept: FastWARC reads a missing `Content-Length`, or one
//! that is not a number, as 0 and then fails on the block as if it were the next header, losing every record
//! after it; here it is `None`, and the reader rejects that record and finds the next one.

use std::borrow::Cow;
use std::sync::LazyLock;

use memchr::memmem::Finder;

// Built once: `memmem::find` builds its searcher on every call, which showed in profiles at a few calls per
// record.
static LINE_END: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\r\n"));
static BLOCK_END: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\r\n\r\n"));

/// Index of the first CRLF in `h`.
pub fn line_end(h: &[u8]) -> Option<usize> {
    LINE_END.find(h)
}

/// Index of the first CRLF CRLF (the end of a header block) in `h`.
pub fn block_end(h: &[u8]) -> Option<usize> {
    BLOCK_END.find(h)
}

/// WARC-Type bits, as FastWARC's `WarcRecordType` (the reader's `record_types` filter is a mask of them).
pub const TYPES: [(&str, u32); 8] = [
    ("warcinfo", 2),
    ("response", 4),
    ("resource", 8),
    ("request", 16),
    ("metadata", 32),
    ("revisit", 64),
    ("conversion", 128),
    ("continuation", 256),
];
/// A WARC-Type value that is none of [`TYPES`] (never selected: the mask only holds known bits).
pub const UNKNOWN: u32 = 1 << 15;
/// FastWARC's `max_header_len`: a header block longer than this is an error, not a record.
pub const MAX_HEADER: usize = 32 << 10;

/// The header lines of a block (after its first line): `(key, value)`, trimmed, in order.
pub struct Fields<'a> {
    items: Vec<(&'a [u8], Cow<'a, [u8]>)>,
}

impl<'a> Fields<'a> {
    /// Parse `lines`: header lines, each ended by CRLF (the last one may lack it).
    pub fn parse(lines: &'a [u8]) -> Self {
        let mut items: Vec<(&'a [u8], Cow<'a, [u8]>)> = Vec::with_capacity(16);
        let mut rest = lines;
        while !rest.is_empty() {
            let (line, next) = match line_end(rest) {
                Some(k) => (&rest[..k], &rest[k + 2..]),
                None => (rest, &rest[rest.len()..]),
            };
            rest = next;
            if line.is_empty() {
                break;
            }
            if matches!(line[0], b' ' | b'\t') {
                let more = line.trim_ascii();
                match items.last_mut() {
                    Some((_, v)) => {
                        let v = v.to_mut();
                        v.push(b' ');
                        v.extend_from_slice(more);
                    }
                    None => items.push((&line[..0], Cow::Borrowed(more))),
                }
            } else if let Some(c) = memchr::memchr(b':', line) {
                items.push((
                    line[..c].trim_ascii(),
                    Cow::Borrowed(line[c + 1..].trim_ascii()),
                ));
            }
        }
        Fields { items }
    }

    /// The first value of `key` (ASCII case-insensitive).
    pub fn get(&self, key: &str) -> Option<&[u8]> {
        let key = key.as_bytes();
        self.items
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_ref())
    }

    /// `(type bit, is HTTP, Content-Length)` by FastWARC's rule (see the module docs); the length is `None`
    /// when that rule finds no `Content-Length` or one that is not a number (FastWARC reads 0 then, and takes
    /// the block for the next header: the reader reports the record and looks for the next one instead).
    pub fn record_kind(&self) -> (u32, bool, Option<usize>) {
        let (mut kind, mut http, mut length, mut found) = (0, false, None, 0);
        for (k, v) in &self.items {
            match *k {
                b"WARC-Type" => kind = type_bit(v),
                b"Content-Type" => {
                    http = v.as_ref() == b"application/http" || v.starts_with(b"application/http;")
                }
                b"Content-Length" => {
                    length = std::str::from_utf8(v).ok().and_then(|s| s.parse().ok())
                }
                _ => continue,
            }
            found += 1;
            if found == 3 {
                break;
            }
        }
        (kind, http, length)
    }
}

fn type_bit(value: &[u8]) -> u32 {
    TYPES
        .iter()
        .find(|(name, _)| value.eq_ignore_ascii_case(name.as_bytes()))
        .map_or(UNKNOWN, |&(_, bit)| bit)
}

/// The reader's name of a type bit.
pub fn type_name(bit: u32) -> &'static str {
    TYPES
        .iter()
        .find(|&&(_, b)| b == bit)
        .map_or("unknown", |&(name, _)| name)
}

/// Is `line` (its trailing whitespace ignored) a WARC version line FastWARC accepts?
pub fn is_version_line(line: &[u8]) -> bool {
    let line = line.trim_ascii_end();
    matches!(line, b"WARC/1.0" | b"WARC/1.1") || (line.starts_with(b"WARC/0.") && line.len() <= 9)
}

/// The HTTP header block at the start of a record's block: status line, fields, and how many bytes it takes
/// (up to and with its blank line, or the whole block when it has none).
pub struct Http<'a> {
    pub status: Option<u16>,
    pub fields: Fields<'a>,
    pub len: usize,
}

/// Parse the HTTP headers at the start of `block`; `None` when they run past [`MAX_HEADER`] (FastWARC's
/// "Maximum header length exceeded").
pub fn http(block: &[u8]) -> Option<Http<'_>> {
    if block.starts_with(b"\r\n") {
        return Some(Http {
            status: None,
            fields: Fields { items: Vec::new() },
            len: 2,
        });
    }
    let (head, len) = match block_end(block) {
        Some(k) => (&block[..k + 2], k + 4),
        None => (block, block.len()),
    };
    if len > MAX_HEADER {
        return None;
    }
    let (status_line, lines) = match line_end(head) {
        Some(k) => (&head[..k], &head[k + 2..]),
        None => (head, &head[head.len()..]),
    };
    Some(Http {
        status: status_code(status_line.trim_ascii()),
        fields: Fields::parse(lines),
        len,
    })
}

fn status_code(line: &[u8]) -> Option<u16> {
    if !line.starts_with(b"HTTP/") {
        return None;
    }
    let code = line.splitn(3, |&b| b == b' ').nth(1)?;
    std::str::from_utf8(code).ok()?.parse().ok()
}

/// A WARC header value as text (UTF-8, invalid bytes replaced), as FastWARC decodes WARC headers.
pub fn warc_text(v: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(v)
}

/// An HTTP header value as text (windows-1252), as FastWARC decodes HTTP headers.
pub fn http_text(v: &[u8]) -> Cow<'_, str> {
    if v.is_ascii() {
        return Cow::Borrowed(std::str::from_utf8(v).expect("ASCII is UTF-8"));
    }
    encoding_rs::WINDOWS_1252.decode_without_bom_handling(v).0
}
