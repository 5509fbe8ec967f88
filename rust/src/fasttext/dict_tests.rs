//! Unit tests of the dictionary: tokens, hashes, character and word n-grams, pruning.

use super::*;

/// A dictionary read from the bytes fastText would write for `words` (`true` = label), no pruning
/// unless `prune` is given.
fn dict(words: &[(&str, bool)], hashing: Hashing, prune: Option<&[(i32, i32)]>) -> Dictionary {
    let nlabels = words.iter().filter(|w| w.1).count() as i32;
    let mut b = Vec::new();
    b.extend((words.len() as i32).to_le_bytes());
    b.extend((words.len() as i32 - nlabels).to_le_bytes());
    b.extend(nlabels.to_le_bytes());
    b.extend(0i64.to_le_bytes());
    b.extend(prune.map_or(-1i64, |p| p.len() as i64).to_le_bytes());
    for (w, label) in words {
        b.extend(w.as_bytes());
        b.push(0);
        b.extend(1i64.to_le_bytes());
        b.push(u8::from(*label));
    }
    for (from, to) in prune.unwrap_or(&[]) {
        b.extend(from.to_le_bytes());
        b.extend(to.to_le_bytes());
    }
    Dictionary::load(&mut Reader::new(&b), hashing).unwrap()
}

fn plain(word_ngrams: i32) -> Hashing {
    Hashing {
        minn: 0,
        maxn: 0,
        bucket: 1000,
        word_ngrams,
    }
}

fn line(d: &Dictionary, text: &str) -> Vec<i32> {
    line_read(d, text, false)
}

fn line_read(d: &Dictionary, text: &str, whole: bool) -> Vec<i32> {
    let mut out = Vec::new();
    let mut s = Scratch {
        hashes: Vec::new(),
        word: Vec::new(),
    };
    d.line(text.as_bytes(), &mut out, &mut s, whole);
    out
}

#[test]
fn a_whole_text_reads_as_its_newlines_replaced_plus_one() {
    let d = dict(
        &[
            ("hello", false),
            ("world", false),
            ("</s>", false),
            ("__label__x", true),
        ],
        plain(2),
        None,
    );
    for text in [
        "hello world",
        "hello\nworld\n",
        "\n\nhello\r\n\tworld  ",
        "",
        "\n",
        "hello </s> world",
        "__label__x\nhello",
        "unknown\x0bwords\x0c\0here",
    ] {
        let prepared = format!("{}\n", text.replace('\n', " "));
        assert_eq!(line_read(&d, text, true), line(&d, &prepared), "{text:?}");
    }
}

#[test]
fn hash_is_fnv1a_over_sign_extended_bytes() {
    assert_eq!(hash(b"a"), 0xe40c_292c); // FNV-1a of "a"
    assert_eq!(hash(b""), FNV_OFFSET);
    // a byte >= 0x80 is xor-ed as 0xFFFFFFxx (fastText's `uint32_t(int8_t(c))`), not as 0x000000xx
    assert_eq!(
        hash(&[0xC3]),
        (FNV_OFFSET ^ 0xFFFF_FFC3).wrapping_mul(FNV_PRIME)
    );
}

#[test]
fn read_word_splits_like_fasttext() {
    let text = b" a\tb\r\x0b\x0cc\0d\n\n e";
    let mut pos = 0;
    let mut got = Vec::new();
    while let Some(w) = read_word(text, &mut pos) {
        got.push(String::from_utf8_lossy(w).into_owned());
    }
    assert_eq!(got, ["a", "b", "c", "d", "</s>", "</s>", "e"]);
}

#[test]
fn line_stops_at_the_first_newline_and_skips_labels() {
    let d = dict(
        &[("hello", false), ("</s>", false), ("__label__x", true)],
        plain(1),
        None,
    );
    // known word, unknown word (no n-grams: maxn 0), a label in the text, then </s> ends the line
    assert_eq!(
        line(&d, "hello world __label__x __label__new\nhello"),
        vec![0, 1]
    );
    assert_eq!(line(&d, ""), Vec::<i32>::new());
}

#[test]
fn word_ngrams_hash_runs_of_token_hashes() {
    let d = dict(
        &[("hello", false), ("</s>", false), ("__label__x", true)],
        plain(2),
        None,
    );
    let (a, b, c) = (
        hash(b"hello") as i32,
        hash(b"world") as i32,
        hash(b"</s>") as i32,
    );
    let pair = |x: i32, y: i32| {
        let h = (x as i64 as u64)
            .wrapping_mul(116_049_371)
            .wrapping_add(y as i64 as u64);
        2 + (h % 1000) as i32
    };
    // the label token is neither a feature nor part of a word n-gram
    assert_eq!(
        line(&d, "hello __label__x world\n"),
        vec![0, 1, pair(a, b), pair(b, c)]
    );
}

#[test]
fn char_ngrams_skip_the_lone_boundaries_and_count_code_points() {
    let h = Hashing {
        minn: 1,
        maxn: 3,
        bucket: 100,
        word_ngrams: 1,
    };
    let d = dict(&[("</s>", false), ("__label__x", true)], h, None);
    let row = |s: &str| 1 + (hash(s.as_bytes()) % 100) as i32;
    let want: Vec<i32> = ["<a", "<aé", "a", "aé", "aé>", "é", "é>"]
        .iter()
        .map(|s| row(s))
        .collect();
    // "aé" unknown: its n-grams of "<aé>", then </s> (known: its id, never n-grams)
    let mut got = line(&d, "aé\n");
    assert_eq!(got.pop(), Some(0));
    assert_eq!(got, want);
}

#[test]
fn pruned_dictionary_keeps_only_mapped_rows() {
    let words = [("a", false), ("</s>", false), ("__label__x", true)];
    let h = (hash(b"a") as i32 as i64 as u64)
        .wrapping_mul(116_049_371)
        .wrapping_add(hash(b"</s>") as i32 as i64 as u64);
    let row = (h % 1000) as i32;
    // the bigram's row mapped to pruned row 5: feature nwords + 5
    let d = dict(&words, plain(2), Some(&[(row, 5)]));
    assert_eq!(line(&d, "a\n"), vec![0, 1, 7]);
    // not in pruneidx: dropped; an empty pruneidx: no hashed rows at all
    let d = dict(&words, plain(2), Some(&[(row + 1, 5)]));
    assert_eq!(line(&d, "a\n"), vec![0, 1]);
    let d = dict(&words, plain(2), Some(&[]));
    assert_eq!(line(&d, "a\n"), vec![0, 1]);
}
