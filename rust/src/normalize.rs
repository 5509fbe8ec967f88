//! Text normalisation shared by `hash64(normalize=...)` and the MinHash shingler.
//!
//! Modes (the `.pyi` stub documents them for Python users):
//! * `lower`  – Unicode lowercase (full case mapping, final sigma included).
//! * `nfc_ws` – Unicode NFC, then lowercase, then every run of Unicode whitespace becomes one
//!   space and leading/trailing whitespace is dropped.
//! * `alnum`  – like `nfc_ws`, but characters of Unicode general category P* (punctuation) and
//!   S* (symbols) are deleted before whitespace is collapsed (`"don't stop!"` -> `"dont stop"`).

use std::borrow::Cow;
use std::str::FromStr;

use unicode_general_category::{get_general_category, GeneralCategory as Gc};
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

use crate::error::KernelError;
use crate::words::{ascii_words, collapse_words, mixed_words};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normalize {
    Lower,
    NfcWs,
    Alnum,
}

impl FromStr for Normalize {
    type Err = KernelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "lower" => Ok(Self::Lower),
            "nfc_ws" => Ok(Self::NfcWs),
            "alnum" => Ok(Self::Alnum),
            other => Err(KernelError::value(format!(
                "normalize must be None, 'lower', 'nfc_ws' or 'alnum', got {other:?}"
            ))),
        }
    }
}

/// `b` as text: borrowed when it is valid UTF-8 (every Arrow string is), else with U+FFFD for
/// each bad sequence. `String::from_utf8_lossy` alone walks valid text chunk by chunk, slower than
/// `str::from_utf8`'s word-at-a-time check: 2.5 % of a W3 MinHash run.
pub fn utf8_text(b: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(b),
    }
}

/// True for punctuation (P*) and symbol (S*) characters, which `alnum` deletes.
#[inline]
pub fn is_punct_or_symbol(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation();
    }
    matches!(
        get_general_category(c),
        Gc::ConnectorPunctuation
            | Gc::DashPunctuation
            | Gc::OpenPunctuation
            | Gc::ClosePunctuation
            | Gc::InitialPunctuation
            | Gc::FinalPunctuation
            | Gc::OtherPunctuation
            | Gc::MathSymbol
            | Gc::CurrencySymbol
            | Gc::ModifierSymbol
            | Gc::OtherSymbol
    )
}

/// Append the lowercase of `s` to `out`.
fn push_lower(s: &str, out: &mut String) {
    if s.is_ascii() {
        let start = out.len();
        out.push_str(s);
        // SAFETY-free: ASCII lowercasing keeps the string valid UTF-8.
        out[start..].make_ascii_lowercase();
    } else {
        out.push_str(&s.to_lowercase());
    }
}

/// Append the NFC form of `s` lowercased to `out`.
fn push_nfc_lower(s: &str, out: &mut String) {
    if s.is_ascii() || is_nfc_quick(s.chars()) == IsNormalized::Yes {
        push_lower(s, out);
    } else {
        let nfc: String = s.nfc().collect();
        push_lower(&nfc, out);
    }
}

/// Normalise `text` into `out` (cleared first). `scratch` is reused between calls.
pub fn normalize_into(text: &str, mode: Normalize, scratch: &mut String, out: &mut String) {
    out.clear();
    if mode != Normalize::Lower {
        let strip = mode == Normalize::Alnum;
        if text.is_ascii() {
            ascii_words(text, strip, out);
            return;
        }
        if !text.contains('\u{3a3}') && is_nfc_quick(text.chars()) == IsNormalized::Yes {
            mixed_words(text, strip, out);
            return;
        }
    }
    match mode {
        Normalize::Lower => push_lower(text, out),
        Normalize::NfcWs | Normalize::Alnum => {
            scratch.clear();
            push_nfc_lower(text, scratch);
            let strip = mode == Normalize::Alnum;
            collapse_words(scratch, strip, out);
        }
    }
}

/// Convenience wrapper returning a new `String`.
pub fn normalize(text: &str, mode: Normalize) -> String {
    let (mut scratch, mut out) = (String::new(), String::new());
    normalize_into(text, mode, &mut scratch, &mut out);
    out
}

/// The general path, for tests of the faster ones: NFC and lowercase of the whole text, then the
/// words collapsed.
#[cfg(test)]
pub(crate) fn general_words(t: &str, strip: bool) -> String {
    let (mut scratch, mut out) = (String::new(), String::new());
    push_nfc_lower(t, &mut scratch);
    collapse_words(&scratch, strip, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn modes() {
        assert_eq!(normalize("HeLLo  World", Normalize::Lower), "hello  world");
        assert_eq!(normalize("ΑΣ", Normalize::Lower), "ας");
        assert_eq!(normalize("  A\t\nB\u{3000}c  ", Normalize::NfcWs), "a b c");
        // "e" + combining acute composes to U+00E9 under NFC.
        assert_eq!(normalize("Cafe\u{301}", Normalize::NfcWs), "caf\u{e9}");
        assert_eq!(
            normalize("Don't -- stop!!  $5 «ok»", Normalize::Alnum),
            "dont stop 5 ok"
        );
        assert_eq!(normalize("", Normalize::Alnum), "");
        assert_eq!(normalize("!!! ...", Normalize::Alnum), "");
    }

    #[test]
    fn rejects_unknown_mode() {
        assert!(matches!(
            "upper".parse::<Normalize>(),
            Err(KernelError::Value(_))
        ));
    }

    proptest! {
        #![proptest_config(crate::fuzz_cases(300))]
        /// Prose with curly quotes, dashes, accents, no-break and ideographic spaces, symbols
        /// that lowercase (circled letters) and letters that lowercase to two characters,
        /// through `normalize_into` (which picks the path) against the general path.
        #[test]
        fn mixed_text_matches_general_path_fuzzed(
            t in "([a-zA-Z0-9 ,.\t]{0,20}[\u{e9}\u{c9}\u{2019}\u{2014}\u{a0}\u{3000}\u{24b6}\u{130}\u{df}\u{3c3}\u{3a3}\u{301}\u{4e2d}]{0,2}){0,8}"
        ) {
            for (mode, strip) in [(Normalize::NfcWs, false), (Normalize::Alnum, true)] {
                prop_assert_eq!(normalize(&t, mode), general_words(&t, strip));
            }
        }

        #[test]
        fn any_text_matches_general_path(t in any::<String>()) {
            for (mode, strip) in [(Normalize::NfcWs, false), (Normalize::Alnum, true)] {
                prop_assert_eq!(normalize(&t, mode), general_words(&t, strip));
            }
        }

        #[test]
        fn never_panics_and_is_idempotent(s in any::<String>()) {
            for mode in [Normalize::Lower, Normalize::NfcWs, Normalize::Alnum] {
                let once = normalize(&s, mode);
                if mode != Normalize::Lower {
                    prop_assert!(!once.starts_with(' ') && !once.ends_with(' '));
                    prop_assert!(!once.contains("  "));
                }
            }
        }
    }
}
