//! Bindings of the text quality kernels (`text/`): argument conversion only. Thresholds arrive as one dict
//! per filter, keyed as DataTrove's constructor arguments; a key this kernel does not know is refused.

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, UInt32Array};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::arrays::string_array;
use crate::columns::BytesColumn;
use crate::py_arrow::{export, import_chunks, run};
use crate::text::{self, C4Params, FineWebParams, Lang, QualityParams, RepetitionParams};

/// Reads a params dict, remembering which keys were used so unknown ones can be refused.
struct Args<'a, 'py> {
    kernel: &'static str,
    dict: Option<&'a Bound<'py, PyDict>>,
    used: Vec<&'static str>,
}

impl<'py> Args<'_, 'py> {
    fn get(&mut self, key: &'static str) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.used.push(key);
        match self.dict {
            None => Ok(None),
            Some(d) => d.get_item(key),
        }
    }

    fn err(&self, key: &str, want: &str, v: &Bound<'_, PyAny>) -> PyErr {
        PyTypeError::new_err(format!("{}: {key} must be {want}, got {v}", self.kernel))
    }

    /// A threshold: `None` disables it (absent keeps the default).
    fn opt_f64(&mut self, key: &'static str, default: Option<f64>) -> PyResult<Option<f64>> {
        match self.get(key)? {
            None => Ok(default),
            Some(v) if v.is_none() => Ok(None),
            Some(v) => v
                .extract::<f64>()
                .map(Some)
                .map_err(|_| self.err(key, "a number or None", &v)),
        }
    }

    fn f64(&mut self, key: &'static str, default: f64) -> PyResult<f64> {
        match self.get(key)? {
            None => Ok(default),
            Some(v) => v
                .extract::<f64>()
                .map_err(|_| self.err(key, "a number", &v)),
        }
    }

    fn int(&mut self, key: &'static str, default: i64) -> PyResult<i64> {
        match self.get(key)? {
            None => Ok(default),
            Some(v) => v.extract::<i64>().map_err(|_| self.err(key, "an int", &v)),
        }
    }

    fn flag(&mut self, key: &'static str, default: bool) -> PyResult<bool> {
        match self.get(key)? {
            None => Ok(default),
            Some(v) => v.extract::<bool>().map_err(|_| self.err(key, "a bool", &v)),
        }
    }

    fn strs(&mut self, key: &'static str) -> PyResult<Option<Vec<String>>> {
        match self.get(key)? {
            None => Ok(None),
            Some(v) if v.is_none() => Ok(None),
            Some(v) => v
                .extract::<Vec<String>>()
                .map(Some)
                .map_err(|_| self.err(key, "a list of str", &v)),
        }
    }

    fn pairs(
        &mut self,
        key: &'static str,
        default: Vec<(usize, f64)>,
    ) -> PyResult<Vec<(usize, f64)>> {
        match self.get(key)? {
            None => Ok(default),
            Some(v) if v.is_none() => Ok(vec![]),
            Some(v) => v
                .extract::<Vec<(usize, f64)>>()
                .map_err(|_| self.err(key, "a list of (n, fraction) pairs", &v)),
        }
    }

    /// Refuse keys no getter asked for (a misspelt threshold must not be silently ignored).
    fn finish(self) -> PyResult<()> {
        if let Some(d) = self.dict {
            for k in d.keys() {
                let k: String = k.extract()?;
                if !self.used.contains(&k.as_str()) {
                    return Err(PyValueError::new_err(format!(
                        "{}: unknown parameter '{k}'; known: {}",
                        self.kernel,
                        self.used.join(", ")
                    )));
                }
            }
        }
        Ok(())
    }
}

fn args<'a, 'py>(kernel: &'static str, d: Option<&'a Bound<'py, PyDict>>) -> Args<'a, 'py> {
    Args {
        kernel,
        dict: d,
        used: Vec::new(),
    }
}

fn quality_params(d: Option<&Bound<'_, PyDict>>) -> PyResult<QualityParams> {
    let mut a = args("gopher_quality", d);
    let df = QualityParams::default();
    let p = QualityParams {
        min_doc_words: a.opt_f64("min_doc_words", df.min_doc_words)?,
        max_doc_words: a.opt_f64("max_doc_words", df.max_doc_words)?,
        min_avg_word_length: a.opt_f64("min_avg_word_length", df.min_avg_word_length)?,
        max_avg_word_length: a.opt_f64("max_avg_word_length", df.max_avg_word_length)?,
        max_symbol_word_ratio: a.opt_f64("max_symbol_word_ratio", df.max_symbol_word_ratio)?,
        max_bullet_lines_ratio: a.opt_f64("max_bullet_lines_ratio", df.max_bullet_lines_ratio)?,
        max_ellipsis_lines_ratio: a
            .opt_f64("max_ellipsis_lines_ratio", df.max_ellipsis_lines_ratio)?,
        max_non_alpha_words_ratio: a
            .opt_f64("max_non_alpha_words_ratio", df.max_non_alpha_words_ratio)?,
        min_stop_words: a.opt_f64("min_stop_words", df.min_stop_words)?,
        stop_words: a.strs("stop_words")?.unwrap_or(df.stop_words),
    };
    a.finish()?;
    Ok(p)
}

fn repetition_params(d: Option<&Bound<'_, PyDict>>) -> PyResult<RepetitionParams> {
    let mut a = args("gopher_repetition", d);
    let df = RepetitionParams::default();
    let p = RepetitionParams {
        dup_line_frac: a.opt_f64("dup_line_frac", df.dup_line_frac)?,
        dup_para_frac: a.opt_f64("dup_para_frac", df.dup_para_frac)?,
        dup_line_char_frac: a.opt_f64("dup_line_char_frac", df.dup_line_char_frac)?,
        dup_para_char_frac: a.opt_f64("dup_para_char_frac", df.dup_para_char_frac)?,
        top_n_grams: a.pairs("top_n_grams", df.top_n_grams)?,
        dup_n_grams: a.pairs("dup_n_grams", df.dup_n_grams)?,
    };
    a.finish()?;
    Ok(p)
}

fn c4_params(d: Option<&Bound<'_, PyDict>>) -> PyResult<C4Params> {
    let mut a = args("c4_quality", d);
    let df = C4Params::default();
    let p = C4Params {
        split_paragraph: a.flag("split_paragraph", df.split_paragraph)?,
        remove_citations: a.flag("remove_citations", df.remove_citations)?,
        filter_no_terminal_punct: a
            .flag("filter_no_terminal_punct", df.filter_no_terminal_punct)?,
        min_num_sentences: a.int("min_num_sentences", df.min_num_sentences)?,
        min_words_per_line: a.int("min_words_per_line", df.min_words_per_line)?,
        max_word_length: a.int("max_word_length", df.max_word_length)?,
        filter_lorem_ipsum: a.flag("filter_lorem_ipsum", df.filter_lorem_ipsum)?,
        filter_javascript: a.flag("filter_javascript", df.filter_javascript)?,
        filter_curly_bracket: a.flag("filter_curly_bracket", df.filter_curly_bracket)?,
        filter_policy: a.flag("filter_policy", df.filter_policy)?,
    };
    a.finish()?;
    Ok(p)
}

fn fineweb_params(d: Option<&Bound<'_, PyDict>>) -> PyResult<FineWebParams> {
    let mut a = args("fineweb_quality", d);
    let df = FineWebParams::default();
    let p = FineWebParams {
        line_punct_thr: a.f64("line_punct_thr", df.line_punct_thr)?,
        line_punct_exclude_zero: a.flag("line_punct_exclude_zero", df.line_punct_exclude_zero)?,
        stop_chars: a.strs("stop_chars")?,
        short_line_thr: a.f64("short_line_thr", df.short_line_thr)?,
        short_line_length: a
            .int("short_line_length", df.short_line_length as i64)?
            .max(0) as usize,
        char_duplicates_ratio: a.f64("char_duplicates_ratio", df.char_duplicates_ratio)?,
        new_line_ratio: a.f64("new_line_ratio", df.new_line_ratio)?,
    };
    a.finish()?;
    Ok(p)
}

/// gopher_quality(texts, params=None, language="en") -> pyarrow.StringArray of reasons (null = keep).
#[pyfunction]
#[pyo3(signature = (texts, params=None, language="en"))]
fn gopher_quality(
    py: Python<'_>,
    texts: &Bound<'_, PyAny>,
    params: Option<&Bound<'_, PyDict>>,
    language: &str,
) -> PyResult<Py<PyAny>> {
    const K: &str = "gopher_quality";
    let p = quality_params(params)?;
    let lang = Lang::from_code(language);
    let chunks = import_chunks(texts, K, "texts")?;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        Ok(string_array(&text::gopher_quality_column(&col, &p, lang)))
    })?;
    export(py, K, out)
}

/// gopher_repetition(texts, params=None, language="en") -> pyarrow.StringArray of reasons (null = keep).
#[pyfunction]
#[pyo3(signature = (texts, params=None, language="en"))]
fn gopher_repetition(
    py: Python<'_>,
    texts: &Bound<'_, PyAny>,
    params: Option<&Bound<'_, PyDict>>,
    language: &str,
) -> PyResult<Py<PyAny>> {
    const K: &str = "gopher_repetition";
    let p = repetition_params(params)?;
    let lang = Lang::from_code(language);
    let chunks = import_chunks(texts, K, "texts")?;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        Ok(string_array(&text::gopher_repetition_column(
            &col, &p, lang,
        )))
    })?;
    export(py, K, out)
}

/// fineweb_quality(texts, params=None, language="en") -> pyarrow.StringArray of reasons (null = keep).
#[pyfunction]
#[pyo3(signature = (texts, params=None, language="en"))]
fn fineweb_quality(
    py: Python<'_>,
    texts: &Bound<'_, PyAny>,
    params: Option<&Bound<'_, PyDict>>,
    language: &str,
) -> PyResult<Py<PyAny>> {
    const K: &str = "fineweb_quality";
    let p = fineweb_params(params)?;
    let lang = Lang::from_code(language);
    let chunks = import_chunks(texts, K, "texts")?;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        Ok(string_array(&text::fineweb_column(&col, &p, lang)))
    })?;
    export(py, K, out)
}

/// c4_quality(texts, params=None, language="en") -> (texts, reasons, line_counts).
#[pyfunction]
#[pyo3(signature = (texts, params=None, language="en"))]
fn c4_quality(
    py: Python<'_>,
    texts: &Bound<'_, PyAny>,
    params: Option<&Bound<'_, PyDict>>,
    language: &str,
) -> PyResult<(Py<PyAny>, Py<PyAny>, Py<PyDict>)> {
    const K: &str = "c4_quality";
    let p = c4_params(params)?;
    let lang = Lang::from_code(language);
    let chunks = import_chunks(texts, K, "texts")?;
    let (cleaned, reasons, counts) = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        let (t, r, c) = text::c4_column(&col, &p, lang);
        let t: Vec<Option<std::borrow::Cow<'_, str>>> =
            t.into_iter().map(|s| s.map(Into::into)).collect();
        Ok((string_array(&t), string_array(&r), c))
    })?;
    let d = PyDict::new(py);
    for (k, v) in text::c4::COUNTERS.iter().zip(counts) {
        d.set_item(k, v)?;
    }
    Ok((export(py, K, cleaned)?, export(py, K, reasons)?, d.unbind()))
}

/// text_words(texts, language="en") -> pyarrow.ListArray of the words DataTrove's tokenizer gives.
#[pyfunction]
#[pyo3(signature = (texts, language="en"))]
fn text_words(py: Python<'_>, texts: &Bound<'_, PyAny>, language: &str) -> PyResult<Py<PyAny>> {
    const K: &str = "text_words";
    let lang = Lang::from_code(language);
    let chunks = import_chunks(texts, K, "texts")?;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        let mut b = ListBuilder::new(StringBuilder::new());
        for row in text::words_column(&col, lang) {
            match row {
                Some(ws) => {
                    for w in ws {
                        b.values().append_value(w);
                    }
                    b.append(true);
                }
                None => b.append(false),
            }
        }
        Ok(Arc::new(b.finish()) as ArrayRef)
    })?;
    export(py, K, out)
}

/// sentence_count(texts, language="en") -> pyarrow.UInt32Array (spaCy sentencizer on the tokens).
#[pyfunction]
#[pyo3(signature = (texts, language="en"))]
fn sentence_count(py: Python<'_>, texts: &Bound<'_, PyAny>, language: &str) -> PyResult<Py<PyAny>> {
    const K: &str = "sentence_count";
    let lang = Lang::from_code(language);
    let chunks = import_chunks(texts, K, "texts")?;
    let out = run(py, K, move || {
        let col = BytesColumn::from_chunks(&chunks, true)?;
        Ok(Arc::new(UInt32Array::from(text::sentences_column(&col, lang))) as ArrayRef)
    })?;
    export(py, K, out)
}

/// Names of C4's line counters, in the order the kernel reports them.
fn c4_counters(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    PyList::new(py, text::c4::COUNTERS)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gopher_quality, m)?)?;
    m.add_function(wrap_pyfunction!(gopher_repetition, m)?)?;
    m.add_function(wrap_pyfunction!(fineweb_quality, m)?)?;
    m.add_function(wrap_pyfunction!(c4_quality, m)?)?;
    m.add_function(wrap_pyfunction!(text_words, m)?)?;
    m.add_function(wrap_pyfunction!(sentence_count, m)?)?;
    m.add("C4_LINE_COUNTERS", c4_counters(m.py())?)?;
    Ok(())
}
