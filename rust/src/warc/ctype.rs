//! A Content-Type value split into the reader's `content_type` (mime type) and `charset` columns, here rather
//! than by the pyarrow calls of `mdf_text.io.warc._content_types`, which cost ~0.5 ms a 42 MB plain WARC read
//! (~4 % of it, `benchmarks/bench_warc_read.py`).
//!
//! Only ASCII values are split here; the rest (rare: a header outside ASCII) are left to the pyarrow calls,
//! so that Unicode lower-casing and trimming stay pyarrow's own. For ASCII this is exactly what they do:
//! lower-case; the mime type is the part before the first `;`, trimmed of pyarrow's ASCII whitespace (`\t`
//! to `\r`, `\x1c` to `\x1f`, space), null when empty; the charset is the first match of the RE2 pattern
//! `charset\s*=\s*["']?([^"';,\s]+)`, where `\s` is `[\t\n\f\r ]`. `tests/test_warc_kernel.py` compares the
//! two on tricky values.

/// What the pattern's `\s` matches.
fn re2_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0C | b'\r' | b' ')
}

/// What `utf8_trim_whitespace` trims among ASCII characters.
fn arrow_space(b: u8) -> bool {
    matches!(b, 0x09..=0x0D | 0x1C..=0x20)
}

/// `(mime, charset)` of an ASCII Content-Type value, or None when the value is not ASCII.
pub fn split(value: &str) -> Option<(Option<String>, Option<String>)> {
    if !value.is_ascii() {
        return None;
    }
    let lower = value.to_ascii_lowercase();
    let b = lower.as_bytes();
    let head = &b[..memchr::memchr(b';', b).unwrap_or(b.len())];
    let start = head.iter().position(|&c| !arrow_space(c));
    let mime = start.map(|s| {
        let end = head
            .iter()
            .rposition(|&c| !arrow_space(c))
            .expect("a non-space byte exists");
        lower[s..=end].to_owned()
    });
    Some((mime, charset(&lower)))
}

/// The leftmost match of `charset\s*=\s*["']?([^"';,\s]+)` in `lower`, its group.
fn charset(lower: &str) -> Option<String> {
    let b = lower.as_bytes();
    for at in memchr::memmem::find_iter(b, b"charset") {
        let mut i = at + "charset".len();
        while i < b.len() && re2_space(b[i]) {
            i += 1;
        }
        if b.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        while i < b.len() && re2_space(b[i]) {
            i += 1;
        }
        if matches!(b.get(i), Some(b'"' | b'\'')) {
            i += 1; // without the quote the value would start at a quote, which it may not contain
        }
        let len = b[i..]
            .iter()
            .position(|&c| matches!(c, b'"' | b'\'' | b';' | b',') || re2_space(c))
            .unwrap_or(b.len() - i);
        if len > 0 {
            return Some(lower[i..i + len].to_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::split;

    fn s(v: &str) -> (Option<String>, Option<String>) {
        split(v).expect("ASCII")
    }

    #[test]
    fn splits_as_the_pyarrow_calls_do() {
        assert_eq!(
            s("Text/HTML; Charset=\"UTF-8\""),
            (Some("text/html".into()), Some("utf-8".into()))
        );
        assert_eq!(s(" ;charset = 'x'"), (None, Some("x".into())));
        assert_eq!(s("\x0btext/plain\x1c"), (Some("text/plain".into()), None));
        assert_eq!(
            s("a; charset=\"\"; charset=b"),
            (Some("a".into()), Some("b".into()))
        );
        assert_eq!(s("a; charset\x0b=b"), (Some("a".into()), None));
        assert_eq!(
            s("a; charset=\x0bb"),
            (Some("a".into()), Some("\x0bb".into()))
        );
        assert_eq!(s(""), (None, None));
        assert_eq!(split("text/html; charset=\u{e9}"), None);
    }
}
