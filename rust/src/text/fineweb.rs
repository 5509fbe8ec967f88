//! FineWeb's quality rules (Penedo et al. 2024) as DataTrove 0.10.1's `FineWebQualityFilter` applies them.

use super::chars::{char_len, is_dt_terminal, py_strip};
use super::gopher::find_duplicates;

/// `FineWebQualityFilter`'s constructor arguments. `stop_chars: None` = DataTrove's `TERMINAL_PUNCTUATION`.
#[derive(Debug, Clone)]
pub struct FineWebParams {
    pub line_punct_thr: f64,
    pub line_punct_exclude_zero: bool,
    pub stop_chars: Option<Vec<String>>,
    pub short_line_thr: f64,
    pub short_line_length: usize,
    pub char_duplicates_ratio: f64,
    pub new_line_ratio: f64,
}

impl Default for FineWebParams {
    fn default() -> Self {
        Self {
            line_punct_thr: 0.12,
            line_punct_exclude_zero: false,
            stop_chars: None,
            short_line_thr: 0.67,
            short_line_length: 30,
            char_duplicates_ratio: 0.01,
            new_line_ratio: 0.3,
        }
    }
}

/// The first FineWeb rule `text` fails, or `None`; `n_words` is the document's word count.
pub fn fineweb(text: &str, n_words: usize, p: &FineWebParams) -> Option<&'static str> {
    let lines: Vec<&str> = text
        .split('\n')
        .filter(|l| !py_strip(l).is_empty())
        .collect();
    if lines.is_empty() {
        return Some("empty");
    }
    let n = lines.len() as f64;
    let ends = |l: &str| match &p.stop_chars {
        None => l.chars().next_back().is_some_and(is_dt_terminal),
        Some(stops) => stops.iter().any(|s| l.ends_with(s.as_str())),
    };
    let ratio = lines.iter().filter(|l| ends(l)).count() as f64 / n;
    if ratio < p.line_punct_thr && !(ratio == 0.0 && p.line_punct_exclude_zero) {
        return Some("line_punct_ratio");
    }
    let ratio = lines
        .iter()
        .filter(|l| char_len(l) <= p.short_line_length)
        .count() as f64
        / n;
    if ratio > p.short_line_thr {
        return Some("short_line_ratio");
    }
    let chars_no_nl = char_len(text) - text.bytes().filter(|&b| b == b'\n').count();
    let ratio = find_duplicates(lines.iter().copied()).1 as f64 / chars_no_nl as f64;
    if ratio > p.char_duplicates_ratio {
        return Some("char_dup_ratio");
    }
    let new_lines = text.bytes().filter(|&b| b == b'\n').count() as f64;
    if n_words == 0 || new_lines / n_words as f64 > p.new_line_ratio {
        return Some("list_ratio");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_in_order() {
        let p = FineWebParams::default();
        assert_eq!(fineweb(" \n\n", 0, &p), Some("empty"));
        assert_eq!(
            fineweb("no stop here\nnor here", 5, &p),
            Some("line_punct_ratio")
        );
        assert_eq!(fineweb("short.\nshort.", 2, &p), Some("short_line_ratio"));
        let long = "This line is certainly long enough to count.";
        assert_eq!(
            fineweb(&format!("{long}\n{long}"), 20, &p),
            Some("char_dup_ratio")
        );
        assert_eq!(fineweb(long, 10, &p), None);
    }
}
