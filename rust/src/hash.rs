//! xxh3 row hashing (`hash64`, `hash128`), seed 0, identical to the Python `xxhash` package's
//! `xxh3_64_intdigest` and `xxh3_128_digest` (big-endian digest bytes).

use xxhash_rust::xxh3::{xxh3_128, xxh3_64};

use crate::columns::{BytesColumn, BytesKind};
use crate::error::{KResult, KernelError};
use crate::normalize::{normalize_into, utf8_text, Normalize};

/// Parse the `normalize` argument; only string columns may be normalised.
pub fn parse_normalize(mode: Option<&str>, kind: BytesKind) -> KResult<Option<Normalize>> {
    let Some(mode) = mode else { return Ok(None) };
    let mode = mode.parse::<Normalize>()?;
    if kind == BytesKind::Binary {
        return Err(KernelError::value(format!(
            "normalize={:?} needs a string column, got binary; decode it to string first or pass normalize=None",
            mode_name(mode)
        )));
    }
    Ok(Some(mode))
}

fn mode_name(m: Normalize) -> &'static str {
    match m {
        Normalize::Lower => "lower",
        Normalize::NfcWs => "nfc_ws",
        Normalize::Alnum => "alnum",
    }
}

#[derive(Default)]
struct Scratch {
    tmp: String,
    out: String,
}

/// Hash the normalised text (or the raw bytes when `mode` is `None`).
#[inline]
fn with_normalized<T>(
    bytes: &[u8],
    mode: Option<Normalize>,
    s: &mut Scratch,
    f: impl Fn(&[u8]) -> T,
) -> T {
    match mode {
        None => f(bytes),
        Some(m) => {
            let text = utf8_text(bytes);
            normalize_into(&text, m, &mut s.tmp, &mut s.out);
            f(s.out.as_bytes())
        }
    }
}

/// xxh3-64 of every row; null rows get 0 (the caller keeps them null).
pub fn hash64_column(col: &BytesColumn, mode: Option<Normalize>) -> Vec<u64> {
    col.par_map(Scratch::default, |s, v| {
        v.map_or(0, |b| with_normalized(b, mode, s, xxh3_64))
    })
}

/// xxh3-128 of every row as 16 big-endian bytes, rows concatenated; null rows are zeros.
pub fn hash128_column(col: &BytesColumn, mode: Option<Normalize>) -> Vec<u8> {
    let digests = col.par_map(Scratch::default, |s, v| {
        v.map_or([0u8; 16], |b| {
            with_normalized(b, mode, s, |x| xxh3_128(x).to_be_bytes())
        })
    });
    digests.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, BinaryArray, StringArray};
    use proptest::prelude::*;

    fn col(v: Vec<Option<&str>>) -> BytesColumn {
        BytesColumn::from_chunks(&[StringArray::from(v).to_data()], true).unwrap()
    }

    #[test]
    fn known_vectors() {
        // Reference values from the Python `xxhash` package.
        assert_eq!(xxh3_64(b""), 0x2d06800538d394c2);
        assert_eq!(xxh3_64(b"hello"), 0x9555e8555c62dcfd);
        let c = col(vec![Some("hello"), None, Some("")]);
        assert_eq!(
            hash64_column(&c, None),
            vec![0x9555e8555c62dcfd, 0, 0x2d06800538d394c2]
        );
        let h = hash128_column(&c, None);
        assert_eq!(h.len(), 48);
        assert_eq!(&h[..16], &xxh3_128(b"hello").to_be_bytes());
    }

    #[test]
    fn normalized_hashes_match_hash_of_normalized_text() {
        let c = col(vec![Some("  Hello,   WORLD! ")]);
        assert_eq!(
            hash64_column(&c, Some(Normalize::Alnum)),
            vec![xxh3_64(b"hello world")]
        );
        assert_eq!(
            hash64_column(&c, Some(Normalize::NfcWs)),
            vec![xxh3_64(b"hello, world!")]
        );
    }

    #[test]
    fn binary_rejects_normalize() {
        let b = BinaryArray::from(vec![&b"\xff\xfe"[..]]);
        let c = BytesColumn::from_chunks(&[b.to_data()], true).unwrap();
        assert!(parse_normalize(Some("lower"), c.kind()).is_err());
        assert!(parse_normalize(Some("bogus"), BytesKind::Utf8).is_err());
        assert_eq!(parse_normalize(None, c.kind()), Ok(None));
        assert_eq!(hash64_column(&c, None), vec![xxh3_64(b"\xff\xfe")]);
    }

    proptest! {
        #![proptest_config(crate::fuzz_cases(200))]
        #[test]
        fn fuzz_binary_rows(rows in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..20)) {
            let b = BinaryArray::from(rows.iter().map(|r| r.as_slice()).collect::<Vec<_>>());
            let c = BytesColumn::from_chunks(&[b.to_data()], true).unwrap();
            let h = hash64_column(&c, None);
            prop_assert_eq!(h.len(), rows.len());
            for (r, v) in rows.iter().zip(h) { prop_assert_eq!(xxh3_64(r), v); }
            // Lossy decoding must never panic whatever the bytes.
            for m in [Normalize::Lower, Normalize::NfcWs, Normalize::Alnum] {
                let mut s = Scratch::default();
                for r in &rows { with_normalized(r, Some(m), &mut s, xxh3_64); }
            }
        }
    }
}
