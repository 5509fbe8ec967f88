//! Loading damaged and hostile model files: every count read from the file is checked against the bytes left
//! before anything is reserved for it, and no header value makes the loader panic (a panic in the binding is
//! an "internal error", an allocation refused aborts the Python process).

use proptest::prelude::*;

use super::*;

/// The bytes of a tiny valid supervised model: 1 word, 1 label, dimension 2, softmax, dense matrices.
/// Returns them and the byte offset of each header field a fuzz case may overwrite (offset, width).
fn tiny() -> (Vec<u8>, Vec<(usize, usize)>) {
    let mut b = Vec::new();
    let mut fields = Vec::new();
    let mut put = |b: &mut Vec<u8>, bytes: &[u8]| {
        fields.push((b.len(), bytes.len()));
        b.extend_from_slice(bytes);
    };
    put(&mut b, &MAGIC.to_le_bytes());
    put(&mut b, &VERSION.to_le_bytes());
    // dim ws epoch minCount neg wordNgrams loss model bucket minn maxn lrUpdateRate
    for v in [2i32, 5, 5, 1, 5, 1, 3, SUPERVISED, 0, 0, 0, 100] {
        put(&mut b, &v.to_le_bytes());
    }
    put(&mut b, &1e-4f64.to_le_bytes());
    for v in [2i32, 1, 1] {
        put(&mut b, &v.to_le_bytes()); // size, nwords, nlabels
    }
    put(&mut b, &3i64.to_le_bytes()); // ntokens
    put(&mut b, &(-1i64).to_le_bytes()); // pruneidx size
    for (word, label) in [(&b"a"[..], 0u8), (b"__label__x", 1)] {
        b.extend_from_slice(word);
        b.push(0);
        put(&mut b, &1i64.to_le_bytes());
        b.push(label);
    }
    for (flag, rows) in [(0u8, 1i64), (0, 1)] {
        b.push(flag); // quant_input, then qout
        put(&mut b, &rows.to_le_bytes());
        put(&mut b, &2i64.to_le_bytes());
        b.extend(0.5f32.to_le_bytes().repeat(2));
    }
    (b, fields)
}

#[test]
fn the_tiny_model_loads() {
    let m = Model::from_bytes(tiny().0).unwrap();
    assert_eq!((m.dim, m.nlabels()), (2, 1));
}

fn message(bytes: Vec<u8>) -> String {
    Model::from_bytes(bytes).unwrap_err().message().to_owned()
}

/// The dictionary's `size`, `nwords`, `nlabels` fields (after the 2 + 12 int32 and the double).
const SIZE_AT: usize = 4 * 14 + 8;

#[test]
fn a_dictionary_claiming_more_entries_than_the_file_holds_is_refused_before_reserving() {
    // Seen red on eefbc81: `Vec::with_capacity(2^31 - 1)` of usize (16 GiB) before the first entry was read:
    // the allocation failed and aborted the process under a memory limit (the Python test runs it so).
    let (mut b, _) = tiny();
    let huge = i32::MAX;
    b[SIZE_AT..SIZE_AT + 4].copy_from_slice(&huge.to_le_bytes());
    b[SIZE_AT + 4..SIZE_AT + 8].copy_from_slice(&(huge - 1).to_le_bytes());
    let text = message(b);
    assert!(
        text.contains("2147483647 dictionary entries") && text.contains("bytes follow"),
        "{text}"
    );
}

#[test]
fn a_pruneidx_claiming_more_pairs_than_the_file_holds_is_refused() {
    let (mut b, _) = tiny();
    let at = SIZE_AT + 12 + 8;
    b[at..at + 8].copy_from_slice(&(1i64 << 60).to_le_bytes());
    let text = message(b);
    assert!(text.contains("pruneidx pairs"), "{text}");
}

#[test]
fn entry_counts_that_overflow_when_added_are_refused() {
    let (mut b, _) = tiny();
    for (k, v) in [i32::MAX, i32::MAX, 2].iter().enumerate() {
        b[SIZE_AT + 4 * k..SIZE_AT + 4 * k + 4].copy_from_slice(&v.to_le_bytes());
    }
    assert!(message(b).contains("dictionary of"));
}

#[test]
fn hierarchical_softmax_without_labels_is_refused_not_a_panic() {
    // loss 1 (hs) builds a Huffman tree of `2 * labels - 1` nodes: 0 labels underflowed
    let (mut b, _) = tiny();
    b[8 + 6 * 4..8 + 7 * 4].copy_from_slice(&1i32.to_le_bytes());
    for (k, v) in [1i32, 1, 0].iter().enumerate() {
        b[SIZE_AT + 4 * k..SIZE_AT + 4 * k + 4].copy_from_slice(&v.to_le_bytes());
    }
    assert!(Model::from_bytes(b).is_err());
}

proptest! {
    #![proptest_config(crate::fuzz_cases(2000))]

    /// Any header field set to any value, and the file cut anywhere: an error or a model, never a panic and
    /// never a reservation past the file's size (which the count checks make impossible to reach).
    #[test]
    fn no_header_value_or_cut_panics(
        field in 0usize..64,
        value in prop_oneof![
            Just(i64::MAX), Just(i64::MIN), Just(-1i64), Just(0i64), Just(i32::MAX as i64),
            Just(1i64 << 40), any::<i64>(), 0i64..300,
        ],
        cut in any::<prop::sample::Index>(),
        do_cut in any::<bool>(),
    ) {
        let (mut b, fields) = tiny();
        let (at, width) = fields[field % fields.len()];
        b[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
        if do_cut {
            b.truncate(cut.index(b.len() + 1));
        }
        let _ = std::panic::catch_unwind(|| Model::from_bytes(b.clone()))
            .map_err(|_| TestCaseError::fail(format!("panic on field {field} = {value}")))?;
    }
}
