//! Bytes of a web page to UTF-8, choosing the encoding the way a browser does.
//!
//! Order (WHATWG "determining the character encoding", as Firefox applies it): a byte-order mark, then the
//! HTTP `charset` the crawler recorded, then a `<meta charset>` / `http-equiv` prescan of the first 1,024
//! bytes, then a statistical guess (chardetng, Firefox's detector), else UTF-8. Decoding is encoding_rs's,
//! lossy: malformed sequences become U+FFFD, so every page yields text and none is an error.

use std::borrow::Cow;

use chardetng::EncodingDetector;
use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252, X_USER_DEFINED};

/// Bytes the `<meta>` prescan looks at (the HTML standard's limit).
pub const PRESCAN_BYTES: usize = 1024;
/// Bytes fed to the detector: enough for a confident guess, bounded on 10 MB pages.
const DETECT_BYTES: usize = 256 * 1024;

/// Where the encoding came from (reported for debugging and asserted by tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Bom,
    Http,
    Meta,
    Detected,
    /// A label (HTTP or meta) named another encoding, but the bytes are valid UTF-8 with non-ASCII in them.
    Utf8Despite,
}

/// `bytes` decoded to UTF-8 (borrowed when they already are), the encoding used and why.
pub fn decode<'a>(
    bytes: &'a [u8],
    http_charset: Option<&str>,
) -> (Cow<'a, str>, &'static Encoding, Source) {
    if let Some((enc, bom_len)) = Encoding::for_bom(bytes) {
        let (text, _) = enc.decode_without_bom_handling(&bytes[bom_len..]);
        return (text, enc, Source::Bom);
    }
    let (enc, source) = match http_charset.and_then(label_encoding) {
        Some(enc) => (enc, Source::Http),
        None => match prescan(&bytes[..bytes.len().min(PRESCAN_BYTES)]) {
            Some(enc) => (enc, Source::Meta),
            None => (detect(bytes), Source::Detected),
        },
    };
    // Where a browser would follow the label, text extraction reads valid UTF-8 as UTF-8: pages saved or
    // re-served as UTF-8 keep their old `<meta charset=gb2312>` or server default (`iso-8859-1`) all over the
    // web, and read by the label every character of them is mojibake. Legacy text with non-ASCII bytes is
    // almost never valid UTF-8 by chance (a lead byte needs exactly its continuation bytes, 0x80-0xBF: GBK's
    // and Latin-1's letters break that within a few characters), so the bytes are the better witness. ASCII
    // pages keep their label (it decodes them the same).
    if enc != UTF_8 && !bytes.is_ascii() && std::str::from_utf8(bytes).is_ok() {
        let (text, _) = UTF_8.decode_without_bom_handling(bytes);
        return (text, UTF_8, Source::Utf8Despite);
    }
    let (text, _) = enc.decode_without_bom_handling(bytes);
    (text, enc, source)
}

/// The encoding a label names (`"latin1"`, `" UTF-8 "`), `None` for unknown labels. `replacement` (for
/// labels of encodings browsers refuse) is treated as unknown so the page is still read.
pub fn label_encoding(label: &str) -> Option<&'static Encoding> {
    Encoding::for_label_no_replacement(label.trim().as_bytes())
}

fn detect(bytes: &[u8]) -> &'static Encoding {
    // Valid UTF-8 is UTF-8 (chardetng says the same on what it sees, but only sees a prefix).
    if std::str::from_utf8(bytes).is_ok() {
        return UTF_8;
    }
    let mut det = EncodingDetector::new();
    let head = &bytes[..bytes.len().min(DETECT_BYTES)];
    det.feed(head, head.len() == bytes.len());
    det.guess(None, true)
}

/// A meta-declared encoding, with the standard's fix-ups: UTF-16 in a meta means UTF-8 (the bytes are
/// ASCII-compatible, or the prescan could not have read them), x-user-defined means windows-1252.
fn fix_meta(enc: &'static Encoding) -> &'static Encoding {
    if enc == UTF_16LE || enc == UTF_16BE {
        UTF_8
    } else if enc == X_USER_DEFINED {
        WINDOWS_1252
    } else {
        enc
    }
}

/// WHATWG prescan, simplified to what pages use: every `<meta ...>` tag's `charset=`, or its
/// `http-equiv="content-type"` with `content="...; charset=..."`. Comments are skipped.
pub fn prescan(head: &[u8]) -> Option<&'static Encoding> {
    let mut i = 0;
    while i < head.len() {
        if head[i] != b'<' {
            i += 1;
            continue;
        }
        if head[i..].starts_with(b"<!--") {
            i = find(head, i + 4, b"-->").map_or(head.len(), |j| j + 3);
            continue;
        }
        let is_meta = head.len() > i + 5
            && head[i + 1..i + 5].eq_ignore_ascii_case(b"meta")
            && (head[i + 5].is_ascii_whitespace() || head[i + 5] == b'/');
        let end = find(head, i + 1, b">").unwrap_or(head.len());
        if is_meta {
            if let Some(enc) = meta_encoding(&head[i + 5..end]) {
                return Some(fix_meta(enc));
            }
        }
        i = end + 1;
    }
    None
}

fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Attributes of one meta tag (the bytes between `<meta` and `>`).
fn meta_encoding(attrs: &[u8]) -> Option<&'static Encoding> {
    let (mut charset, mut content, mut pragma) = (None, None, false);
    for (name, value) in (Attrs { s: attrs, i: 0 }) {
        if name.eq_ignore_ascii_case(b"charset") && charset.is_none() {
            charset = Encoding::for_label_no_replacement(value.trim_ascii());
        } else if name.eq_ignore_ascii_case(b"http-equiv") {
            pragma |= value.trim_ascii().eq_ignore_ascii_case(b"content-type");
        } else if name.eq_ignore_ascii_case(b"content") && content.is_none() {
            content = charset_from_content(value);
        }
    }
    charset.or(if pragma { content } else { None })
}

/// `text/html; charset=Shift_JIS` -> Shift_JIS (the standard's "extract a character encoding from a meta").
fn charset_from_content(value: &[u8]) -> Option<&'static Encoding> {
    let lower = value.to_ascii_lowercase();
    let at = find(&lower, 0, b"charset")? + 7;
    let rest = value[at..].trim_ascii_start();
    let rest = rest.strip_prefix(b"=")?.trim_ascii_start();
    let label = match rest.first() {
        Some(&q @ (b'"' | b'\'')) => rest[1..].split(|&b| b == q).next()?,
        _ => rest
            .split(|&b| b == b';' || b.is_ascii_whitespace())
            .next()?,
    };
    Encoding::for_label_no_replacement(label)
}

/// A forgiving attribute scanner: `name`, `name=value`, `name="value"`, `name='value'`.
struct Attrs<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Iterator for Attrs<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let s = self.s;
        while self.i < s.len() && (s[self.i].is_ascii_whitespace() || s[self.i] == b'/') {
            self.i += 1;
        }
        if self.i >= s.len() {
            return None;
        }
        let start = self.i;
        while self.i < s.len()
            && !matches!(s[self.i], b'=' | b'/')
            && !s[self.i].is_ascii_whitespace()
        {
            self.i += 1;
        }
        let name = &s[start..self.i];
        while self.i < s.len() && s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
        if self.i >= s.len() || s[self.i] != b'=' {
            return Some((name, &[]));
        }
        self.i += 1;
        while self.i < s.len() && s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
        let value = match s.get(self.i) {
            Some(&q @ (b'"' | b'\'')) => {
                let from = self.i + 1;
                let to = s[from..]
                    .iter()
                    .position(|&b| b == q)
                    .map_or(s.len(), |p| p + from);
                self.i = to + 1;
                &s[from..to]
            }
            _ => {
                let from = self.i;
                while self.i < s.len() && !s[self.i].is_ascii_whitespace() {
                    self.i += 1;
                }
                &s[from..self.i]
            }
        };
        Some((name, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_wins_over_everything() {
        let mut page = vec![0xFF, 0xFE];
        for u in "<meta charset=latin1>é".encode_utf16() {
            page.extend_from_slice(&u.to_le_bytes());
        }
        let (text, enc, src) = decode(&page, Some("iso-8859-2"));
        assert_eq!((enc, src), (UTF_16LE, Source::Bom));
        assert!(text.ends_with('é'));
    }

    #[test]
    fn http_then_meta_then_detector() {
        let page = b"<html><head><meta http-equiv='Content-Type' content='text/html; charset=iso-8859-2'></head>\xb1";
        let (text, enc, src) = decode(page, None);
        assert_eq!((enc.name(), src), ("ISO-8859-2", Source::Meta));
        assert!(text.ends_with('ą'));
        let (_, enc, src) = decode(page, Some("windows-1251"));
        assert_eq!((enc.name(), src), ("windows-1251", Source::Http));
        // an unknown HTTP label falls through to the meta
        let (_, enc, _) = decode(page, Some("no-such-charset"));
        assert_eq!(enc.name(), "ISO-8859-2");
        let (_, enc, src) = decode("<p>žluťoučký".as_bytes(), None);
        assert_eq!((enc, src), (UTF_8, Source::Detected));
    }

    /// A page re-saved as UTF-8 that still says `gb2312` (Readability's `qq` test page, whose text came out as
    /// mojibake) reads as UTF-8; the same text really in GBK, and Latin-1 text, still follow their labels.
    /// Seen red before `Source::Utf8Despite` (GB18030 decoded the UTF-8 bytes).
    #[test]
    fn valid_utf8_wins_over_a_legacy_label() {
        let text = "<meta charset=gb2312><p>谷歌在2014年收购的人工智能公司</p>";
        let (got, enc, src) = decode(text.as_bytes(), None);
        assert_eq!((enc, src, &*got), (UTF_8, Source::Utf8Despite, text));
        let (_, enc, src) = decode(text.as_bytes(), Some("iso-8859-1"));
        assert_eq!((enc, src), (UTF_8, Source::Utf8Despite));
        let (gbk, _, _) = encoding_rs::GBK.encode(text);
        let (got, enc, src) = decode(&gbk, None);
        assert_eq!((enc.name(), src, &*got), ("GBK", Source::Meta, text));
        let (got, enc, src) = decode(b"<p>F\xe4hre ab M\xe4rz", Some("windows-1252"));
        assert_eq!(
            (enc, src, &*got),
            (WINDOWS_1252, Source::Http, "<p>Fähre ab März")
        );
        let (_, enc, src) = decode(b"<meta charset=koi8-r><p>ascii only", None);
        assert_eq!((enc.name(), src), ("KOI8-R", Source::Meta));
    }

    #[test]
    fn prescan_forms() {
        assert_eq!(
            prescan(b"<META CHARSET=\"Shift_JIS\">").unwrap().name(),
            "Shift_JIS"
        );
        assert_eq!(prescan(b"<meta charset=utf-16le>"), Some(UTF_8));
        assert_eq!(
            prescan(b"<!-- <meta charset=gbk> --><meta charset=koi8-r>")
                .unwrap()
                .name(),
            "KOI8-R"
        );
        assert_eq!(prescan(b"<meta content='text/html; charset=gbk'>"), None); // no http-equiv
        assert_eq!(prescan(b"<metadata charset=gbk>"), None);
        assert_eq!(prescan(b""), None);
        assert_eq!(prescan(b"<meta"), None);
    }
}
