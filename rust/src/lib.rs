//! Python bindings of the mdf kernels (module `mdf_kernels._native`). Each function here only
//! converts arguments, calls a plain-Rust kernel without the GIL and converts the result; the
//! kernels live in their own modules and are tested with `cargo test`.

pub mod arrays;
pub mod columns;
pub mod domains;
pub mod error;
pub mod fasttext;
pub mod hash;
pub mod html;
pub mod image;
pub mod keyset;
pub mod lsh;
pub mod merge;
pub mod minhash;
pub mod near;
pub mod normalize;
pub mod permute;
pub mod pool;
pub mod recycle;
pub mod sort_pairs;
pub mod sorted_keys;
pub mod text;
pub mod tokens;
pub mod tokens_bpe;
pub mod tokens_fast;
pub mod unionfind;
pub mod url;
pub mod warc;
pub mod words;

mod py_arrow;
mod py_fasttext;
mod py_html;
mod py_image;
mod py_merge;
mod py_near;
mod py_sets;
mod py_text;
mod py_tokens;
mod py_warc;

use pyo3::prelude::*;

use crate::arrays::{
    bool_array, fixed_binary_array, string_array, u32_list_array, u64_array, u8_array, IntColumn,
};
use crate::columns::BytesColumn;
use crate::error::KernelError;
use crate::py_arrow::{export, float_arg, import_chunks, int_arg, opt_str_arg, run, str_arg};

/// hash64(arr, normalize=None) -> pyarrow.UInt64Array
///
/// xxh3-64 (seed 0) of every row, optionally after text normalisation. See _native.pyi.
#[pyfunction]
#[pyo3(signature = (arr, normalize=None))]
fn hash64(
    py: Python<'_>,
    arr: &Bound<'_, PyAny>,
    normalize: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    const K: &str = "hash64";
    let normalize = opt_str_arg(normalize, K, "normalize")?;
    let chunks = import_chunks(arr, K, "arr")?;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        let mode = hash::parse_normalize(normalize.as_deref(), col.kind())?;
        Ok(u64_array(hash::hash64_column(&col, mode), col.nulls()))
    })?;
    export(py, K, out)
}

/// hash128(arr, normalize=None) -> pyarrow.FixedSizeBinaryArray
///
/// xxh3-128 (seed 0) of every row as 16 big-endian bytes. See _native.pyi.
#[pyfunction]
#[pyo3(signature = (arr, normalize=None))]
fn hash128(
    py: Python<'_>,
    arr: &Bound<'_, PyAny>,
    normalize: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    const K: &str = "hash128";
    let normalize = opt_str_arg(normalize, K, "normalize")?;
    let chunks = import_chunks(arr, K, "arr")?;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        let mode = hash::parse_normalize(normalize.as_deref(), col.kind())?;
        Ok(fixed_binary_array(
            16,
            hash::hash128_column(&col, mode),
            col.nulls(),
        ))
    })?;
    export(py, K, out)
}

/// url_host(urls) -> pyarrow.StringArray
///
/// Host of every URL as urllib.parse.urlsplit(url).hostname gives it. See _native.pyi.
#[pyfunction]
fn url_host(py: Python<'_>, urls: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    const K: &str = "url_host";
    let chunks = import_chunks(urls, K, "urls")?;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        Ok(string_array(&url::url_host_column(&col)))
    })?;
    export(py, K, out)
}

/// registered_domain(hosts) -> pyarrow.StringArray
///
/// Registrable domain (eTLD+1) from the compiled-in public suffix list. See _native.pyi.
#[pyfunction]
fn registered_domain(py: Python<'_>, hosts: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    const K: &str = "registered_domain";
    let chunks = import_chunks(hosts, K, "hosts")?;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        Ok(string_array(&domains::registered_domain_column(&col)))
    })?;
    export(py, K, out)
}

/// domain_blocked(hosts, domain_set) -> pyarrow.BooleanArray
///
/// True where the host or a parent domain is in domain_set. See _native.pyi.
#[pyfunction]
fn domain_blocked(
    py: Python<'_>,
    hosts: &Bound<'_, PyAny>,
    domain_set: PyRef<'_, py_sets::DomainSet>,
) -> PyResult<Py<PyAny>> {
    const K: &str = "domain_blocked";
    let chunks = import_chunks(hosts, K, "hosts")?;
    let set = &domain_set.inner;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        Ok(bool_array(set.blocks_column(&col), col.nulls()))
    })?;
    export(py, K, out)
}

/// url_verdicts(urls, domain_set) -> pyarrow.UInt8Array
///
/// url_filter's decision per URL: 0 keep, 1 bad URL, 2 blocked domain. See _native.pyi.
#[pyfunction]
fn url_verdicts(
    py: Python<'_>,
    urls: &Bound<'_, PyAny>,
    domain_set: PyRef<'_, py_sets::DomainSet>,
) -> PyResult<Py<PyAny>> {
    const K: &str = "url_verdicts";
    let chunks = import_chunks(urls, K, "urls")?;
    let set = &domain_set.inner;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        Ok(u8_array(domains::url_verdict_column(&col, set)))
    })?;
    export(py, K, out)
}

// Argument extractors (`from_py_with`): see `py_arrow::int_arg`.
fn num_perm_arg(o: &Bound<'_, PyAny>) -> PyResult<u64> {
    int_arg(o, "minhash", "num_perm", 1, 1 << 16)
}

fn ngram_arg(o: &Bound<'_, PyAny>) -> PyResult<u64> {
    int_arg(o, "minhash", "ngram", 1, 1 << 20)
}

fn seed_arg(o: &Bound<'_, PyAny>) -> PyResult<u64> {
    int_arg(o, "minhash", "seed", 0, u64::MAX)
}

fn tokenizer_arg<'a>(o: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    str_arg(o, "minhash", "tokenizer")
}

/// minhash(texts, num_perm=128, ngram=5, tokenizer='word', seed=1) -> pyarrow.FixedSizeListArray
///
/// MinHash signatures (uint32 x num_perm). Shingling and hash scheme: see _native.pyi.
#[pyfunction]
#[pyo3(name = "minhash", signature = (texts, num_perm=128, ngram=5, tokenizer="word", seed=1))]
fn minhash_signatures(
    py: Python<'_>,
    texts: &Bound<'_, PyAny>,
    #[pyo3(from_py_with = num_perm_arg)] num_perm: u64,
    #[pyo3(from_py_with = ngram_arg)] ngram: u64,
    #[pyo3(from_py_with = tokenizer_arg)] tokenizer: &str,
    #[pyo3(from_py_with = seed_arg)] seed: u64,
) -> PyResult<Py<PyAny>> {
    const K: &str = "minhash";
    let (num_perm, ngram, tokenizer) = (num_perm as usize, ngram as usize, tokenizer.to_owned());
    let chunks = import_chunks(texts, K, "texts")?;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        let hasher = minhash::MinHasher::new(num_perm, ngram, tokenizer.parse()?, seed)?;
        Ok(u32_list_array(
            num_perm,
            hasher.signatures(&col),
            col.nulls(),
        ))
    })?;
    export(py, K, out)
}

/// lsh_band_keys(signatures, bands, rows) -> pyarrow.UInt64Array
///
/// Band keys, row-major (signature i, band j at i*bands+j). See _native.pyi.
#[pyfunction]
fn lsh_band_keys(
    py: Python<'_>,
    signatures: &Bound<'_, PyAny>,
    bands: &Bound<'_, PyAny>,
    rows: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    const K: &str = "lsh_band_keys";
    let bands = int_arg(bands, K, "bands", 1, 1 << 16)? as usize;
    let rows = int_arg(rows, K, "rows", 1, 1 << 16)? as usize;
    let chunks = import_chunks(signatures, K, "signatures")?;
    let out = run(py, K, move || {
        let (k, values, nulls) = arrays::u32_signatures(&chunks)?;
        lsh::check_bands(bands, rows, k)?;
        let keys = lsh::band_keys(&values, k, bands, rows)?;
        let nulls = nulls.and_then(|n| {
            columns::nulls_from_valid(n.iter().flat_map(|v| std::iter::repeat_n(v, bands)))
        });
        Ok(u64_array(keys, nulls))
    })?;
    export(py, K, out)
}

fn fp_weight_arg(o: &Bound<'_, PyAny>) -> PyResult<f64> {
    float_arg(o, "optimal_bands_rows", "fp_weight")
}

fn fn_weight_arg(o: &Bound<'_, PyAny>) -> PyResult<f64> {
    float_arg(o, "optimal_bands_rows", "fn_weight")
}

/// optimal_bands_rows(threshold, num_perm, fp_weight=0.5, fn_weight=0.5) -> (bands, rows)
///
/// LSH parameters minimising weighted false positive + false negative mass.
#[pyfunction]
#[pyo3(signature = (threshold, num_perm, fp_weight=0.5, fn_weight=0.5))]
fn optimal_bands_rows(
    py: Python<'_>,
    threshold: &Bound<'_, PyAny>,
    num_perm: &Bound<'_, PyAny>,
    #[pyo3(from_py_with = fp_weight_arg)] fp_weight: f64,
    #[pyo3(from_py_with = fn_weight_arg)] fn_weight: f64,
) -> PyResult<(usize, usize)> {
    const K: &str = "optimal_bands_rows";
    let threshold = float_arg(threshold, K, "threshold")?;
    let num_perm = int_arg(num_perm, K, "num_perm", 1, 1 << 16)? as usize;
    run(py, K, move || {
        lsh::optimal_bands_rows(threshold, num_perm, fp_weight, fn_weight)
    })
}

/// union_find(left, right, num_nodes=None) -> pyarrow.UInt64Array
///
/// Component id (smallest member index) of every node. See _native.pyi.
#[pyfunction]
#[pyo3(signature = (left, right, num_nodes=None))]
fn union_find(
    py: Python<'_>,
    left: &Bound<'_, PyAny>,
    right: &Bound<'_, PyAny>,
    num_nodes: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    const K: &str = "union_find";
    let num_nodes = match num_nodes {
        Some(o) if !o.is_none() => Some(int_arg(o, K, "num_nodes", 0, u64::MAX)?),
        _ => None,
    };
    let left = import_chunks(left, K, "left")?;
    let right = import_chunks(right, K, "right")?;
    let out = run(py, K, move || {
        let (l, r) = (
            IntColumn::from_chunks(&left, "left")?,
            IntColumn::from_chunks(&right, "right")?,
        );
        for (name, c) in [("left", &l), ("right", &r)] {
            if c.null_count > 0 {
                return Err(KernelError::value(format!(
                    "{name} contains {} nulls; drop null edges first",
                    c.null_count
                )));
            }
        }
        let n = num_nodes.unwrap_or_else(|| unionfind::implied_nodes(&l.values, &r.values));
        Ok(u64_array(
            unionfind::components(n, &l.values, &r.values)?,
            None,
        ))
    })?;
    export(py, K, out)
}

/// Threads used by the kernels (from `MDF_NUM_THREADS`, read at the first parallel call).
#[pyfunction]
fn num_threads(py: Python<'_>) -> PyResult<usize> {
    run(py, "num_threads", pool::num_threads)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(hash64, m)?)?;
    m.add_function(wrap_pyfunction!(hash128, m)?)?;
    m.add_function(wrap_pyfunction!(url_host, m)?)?;
    m.add_function(wrap_pyfunction!(registered_domain, m)?)?;
    m.add_function(wrap_pyfunction!(domain_blocked, m)?)?;
    m.add_function(wrap_pyfunction!(url_verdicts, m)?)?;
    m.add_function(wrap_pyfunction!(minhash_signatures, m)?)?;
    m.add_function(wrap_pyfunction!(lsh_band_keys, m)?)?;
    m.add_function(wrap_pyfunction!(optimal_bands_rows, m)?)?;
    m.add_function(wrap_pyfunction!(union_find, m)?)?;
    m.add_function(wrap_pyfunction!(py_merge::merge_sorted_runs, m)?)?;
    m.add_function(wrap_pyfunction!(py_merge::sort_unique_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(num_threads, m)?)?;
    m.add_class::<py_sets::DomainSet>()?;
    m.add_class::<py_sets::KeySet>()?;
    m.add_class::<py_sets::KeySet128>()?;
    m.add_class::<py_sets::SortedKeys>()?;
    m.add_class::<py_near::NearIndex>()?;
    m.add("ENV_NUM_THREADS", pool::ENV_VAR)?;
    py_image::register(m)?;
    py_text::register(m)?;
    py_tokens::register(m)?;
    py_html::register(m)?;
    py_fasttext::register(m)?;
    py_warc::register(m)?;
    Ok(())
}

/// Proptest settings for the kernels' fuzz tests: `default` cases, or `PROPTEST_CASES` when set, so a long
/// fuzzing run is `PROPTEST_CASES=100000 cargo test --release fuzz` while `cargo test` stays quick.
#[cfg(test)]
pub(crate) fn fuzz_cases(default: u32) -> proptest::test_runner::Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    proptest::test_runner::Config::with_cases(cases)
}
