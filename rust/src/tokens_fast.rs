//! The byte-level BPE tokenizers (GPT-2's scheme, and Llama 3's: a `Split` regex, then `ByteLevel`) encoded
//! without the `tokenizers` crate's per-piece bookkeeping, to the same ids.
//!
//! Why: on one core, tokenizing is nearly all of a tokenize run, and the crate spends most of it on what ids
//! never need: an alignment vector per byte for every pre-tokenized piece (`NormalizedString`), a `String` per
//! token, offsets, masks and words in an `Encoding` (measured with callgrind on the benchmark's data: malloc
//! and free alone ~15 % of the instructions). Here a text's pieces are slices of it, each piece's ids come
//! from a per-thread cache or from the BPE merges on its bytes, and the ids go straight into the output.
//!
//! What is the crate's, to keep the ids equal: the added tokens are split out by the crate itself
//! (`AddedVocabulary::extract_and_normalize`, which also applies the normalizer) whenever the text holds one of
//! them or the tokenizer has a normalizer; the regexes run in the crate's `SysRegex` (the same engine, the same
//! matches); the merges are the file's, and [`Bpe::merge`] is the crate's `Word::merge_all` step for step (a
//! min-heap on rank then position, stale entries skipped by the same test), so its quirks are kept too.
//! Anything else (another model, pre-tokenizer or post-processor, BPE dropout, a subword prefix or suffix, a
//! byte without a vocabulary entry) is left to the crate: [`FastBpe::from_json`] returns `None` and the caller
//! encodes with the crate. `plugins/mdf-tokens/tests/test_ids.py` checks the ids against the Python package
//! on every real text of `../shared/data` for both schemes.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use ahash::AHashMap;
use aho_corasick::AhoCorasick;
use serde_json::Value;
use tokenizers::utils::SysRegex;
use tokenizers::{OffsetReferential, OffsetType, Tokenizer};

use crate::tokens_bpe::{bpe, Bpe};

/// GPT-2's pre-tokenizer regex, as the crate's `ByteLevel` pre-tokenizer has it.
const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
/// Pieces longer than this are not cached (the crate's BPE cache has the same bound).
const MAX_CACHED: usize = 256;
/// Cached pieces per thread and tokenizer; the cache starts over when full.
const CACHE_ENTRIES: usize = 50_000;

/// A thread's ids of pieces already encoded, by the piece's bytes.
type PieceCache = AHashMap<Box<[u8]>, Box<[u32]>>;

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    /// Ids of pieces already encoded, per tokenizer (keyed by its id): the crate's BPE cache is per thread too.
    static CACHE: RefCell<HashMap<usize, PieceCache>> = RefCell::new(HashMap::new());
}

/// A split step before the byte-level one: a regex whose matches and the text between them become pieces.
struct Splitter {
    regex: SysRegex,
}

impl Splitter {
    /// The crate's `SplitDelimiterBehavior::Isolated`: every match and every gap, empty ones dropped.
    fn split<'a>(&self, s: &'a str, out: &mut Vec<&'a str>) {
        let mut prev = 0;
        for (start, end) in self.regex.find_iter(s) {
            if prev != start {
                out.push(&s[prev..start]);
            }
            if end > start {
                out.push(&s[start..end]);
            }
            prev = end;
        }
        if prev < s.len() {
            out.push(&s[prev..]);
        }
    }
}

/// The template of a `TemplateProcessing` post-processor for one sequence: ids before and after it.
struct Template {
    before: Vec<u32>,
    after: Vec<u32>,
}

/// A byte-level BPE tokenizer's pipeline, when the file is one this module encodes exactly (else `None`).
pub struct FastBpe {
    id: usize,
    splits: Vec<Splitter>,
    byte_level_regex: Option<Splitter>,
    add_prefix_space: bool,
    bpe: Bpe,
    template: Option<Template>,
    /// Set when the crate must split the text first: a normalizer, or a text holding an added token.
    normalizer: bool,
    added: Option<AhoCorasick>,
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn null_or_false(v: &Value, key: &str) -> bool {
    matches!(
        v.get(key),
        None | Some(Value::Null) | Some(Value::Bool(false))
    )
}

impl FastBpe {
    /// Read the tokenizer's shape from its JSON; `None` unless every part is one this module encodes exactly.
    pub fn from_json(json: &Value, tok: &Tokenizer) -> Option<Self> {
        let model = json.get("model")?;
        if str_of(model, "type") != Some("BPE")
            || !matches!(model.get("dropout"), None | Some(Value::Null))
            || !null_or_false(model, "continuing_subword_prefix")
            || !null_or_false(model, "end_of_word_suffix")
        {
            return None;
        }
        let (splits, byte_level) = pre_tokenizers(json.get("pre_tokenizer")?)?;
        let bpe = bpe(model)?;
        let template = match json.get("post_processor") {
            None | Some(Value::Null) => None,
            Some(p) if str_of(p, "type") == Some("ByteLevel") => None,
            Some(p) if str_of(p, "type") == Some("TemplateProcessing") => Some(template(p)?),
            _ => return None,
        };
        let contents: Vec<String> = tok
            .get_added_vocabulary()
            .get_added_tokens_decoder()
            .values()
            .map(|t| t.content.clone())
            .filter(|c| !c.is_empty())
            .collect();
        let added = if contents.is_empty() {
            None
        } else {
            Some(AhoCorasick::new(&contents).ok()?)
        };
        let normalizer = !matches!(json.get("normalizer"), None | Some(Value::Null));
        let add_prefix_space = byte_level
            .get("add_prefix_space")
            .and_then(Value::as_bool)?;
        let use_regex = byte_level
            .get("use_regex")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        Some(Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            splits,
            byte_level_regex: if use_regex {
                Some(Splitter {
                    regex: SysRegex::new(GPT2).ok()?,
                })
            } else {
                None
            },
            add_prefix_space,
            bpe,
            template,
            normalizer,
            added,
        })
    }

    /// The ids `Tokenizer::encode_fast(text, add_special_tokens)` gives.
    pub fn encode(
        &self,
        tok: &Tokenizer,
        text: &str,
        add_special_tokens: bool,
        out: &mut Vec<u32>,
    ) {
        let template = self.template.as_ref().filter(|_| add_special_tokens);
        if let Some(t) = template {
            out.extend_from_slice(&t.before);
        }
        let crate_split = self.normalizer || self.added.as_ref().is_some_and(|a| a.is_match(text));
        CACHE.with(|cell| {
            let mut caches = cell.borrow_mut();
            let cache = caches.entry(self.id).or_default();
            if crate_split {
                let pre = tok
                    .get_added_vocabulary()
                    .extract_and_normalize(tok.get_normalizer(), text);
                for (segment, _, tokens) in
                    pre.get_splits(OffsetReferential::Original, OffsetType::None)
                {
                    match tokens {
                        Some(tokens) => out.extend(tokens.iter().map(|t| t.id)),
                        None => self.segment(segment, cache, out),
                    }
                }
            } else if !text.is_empty() {
                self.segment(text, cache, out);
            }
        });
        if let Some(t) = template {
            out.extend_from_slice(&t.after);
        }
    }

    /// Pre-tokenize one segment (text between added tokens) and encode its pieces.
    fn segment(&self, text: &str, cache: &mut PieceCache, out: &mut Vec<u32>) {
        let mut pieces = vec![text];
        let mut next = Vec::new();
        for splitter in &self.splits {
            next.clear();
            for p in &pieces {
                splitter.split(p, &mut next);
            }
            std::mem::swap(&mut pieces, &mut next);
        }
        for p in pieces {
            let mut final_pieces = Vec::new();
            let spaced;
            let p = if self.add_prefix_space && !p.starts_with(' ') {
                spaced = format!(" {p}");
                spaced.as_str()
            } else {
                p
            };
            match &self.byte_level_regex {
                Some(re) => re.split(p, &mut final_pieces),
                None if !p.is_empty() => final_pieces.push(p),
                None => {}
            }
            for piece in final_pieces {
                self.piece(piece.as_bytes(), cache, out);
            }
        }
    }

    fn piece(&self, bytes: &[u8], cache: &mut PieceCache, out: &mut Vec<u32>) {
        if let Some(ids) = cache.get(bytes) {
            out.extend_from_slice(ids);
            return;
        }
        let start = out.len();
        self.bpe.merge(bytes, out);
        if bytes.len() < MAX_CACHED {
            if cache.len() >= CACHE_ENTRIES {
                cache.clear();
            }
            cache.insert(bytes.into(), out[start..].into());
        }
    }
}

/// The split regexes and the final `ByteLevel` step of a supported pre-tokenizer.
fn pre_tokenizers(p: &Value) -> Option<(Vec<Splitter>, &Value)> {
    match str_of(p, "type")? {
        "ByteLevel" => Some((Vec::new(), p)),
        "Sequence" => {
            let steps = p.get("pretokenizers")?.as_array()?;
            let (last, before) = steps.split_last()?;
            if str_of(last, "type")? != "ByteLevel" {
                return None;
            }
            let mut splits = Vec::new();
            for s in before {
                if str_of(s, "type")? != "Split"
                    || str_of(s, "behavior")? != "Isolated"
                    || s.get("invert").and_then(Value::as_bool)?
                {
                    return None;
                }
                let pattern = s.get("pattern")?.get("Regex")?.as_str()?;
                splits.push(Splitter {
                    regex: SysRegex::new(pattern).ok()?,
                });
            }
            Some((splits, last))
        }
        _ => None,
    }
}

/// The single-sequence template of a `TemplateProcessing`: special tokens before and after `$A`.
fn template(p: &Value) -> Option<Template> {
    let specials = p.get("special_tokens")?.as_object()?;
    let mut t = Template {
        before: Vec::new(),
        after: Vec::new(),
    };
    let mut seen_a = false;
    for piece in p.get("single")?.as_array()? {
        if let Some(seq) = piece.get("Sequence") {
            if str_of(seq, "id")? != "A" || seen_a {
                return None;
            }
            seen_a = true;
        } else {
            let id = str_of(piece.get("SpecialToken")?, "id")?;
            let ids = specials.get(id)?.get("ids")?.as_array()?;
            let side = if seen_a { &mut t.after } else { &mut t.before };
            for i in ids {
                side.push(u32::try_from(i.as_u64()?).ok()?);
            }
        }
    }
    seen_a.then_some(t)
}

#[cfg(test)]
mod tests {
    /// A byte-level BPE file written here (every byte's character, a few merges, an added token, ignore_merges
    /// off and on, GPT-2's pre-tokenizer and Llama 3's Split + ByteLevel, a template): the kernel's path gives
    /// the crate's ids on texts with spaces, digits, non-Latin script, emoji, newlines and the added token.
    /// Seen red with the pieces split without the gaps between matches (Llama's regex leaves none, GPT-2's
    /// ByteLevel either; a Split with a narrower regex does).
    #[test]
    fn the_fast_path_gives_the_crates_ids() {
        use crate::tokens::TextTokenizer;
        use crate::tokens_bpe::byte_chars;
        let chars = byte_chars();
        let mut vocab = serde_json::Map::new();
        for (b, c) in chars.iter().enumerate() {
            vocab.insert(c.to_string(), serde_json::json!(b));
        }
        let merges = [
            "Ġ t", "h e", "Ġt he", "Ġ a", "i n", "Ġa n", "Ġan d", "1 2", "Ã ¤", "e r",
        ];
        for (k, m) in merges.iter().enumerate() {
            vocab.insert(m.replace(' ', ""), serde_json::json!(256 + k));
        }
        vocab.insert("<|end|>".into(), serde_json::json!(300));
        let texts = [
            "the and then Äther 1234 rain in inner",
            "  spaced   out\n\nlines\t tab",
            "数据 данные 😀 émigré the<|end|>and <|end|>",
            "'s 've they're 12 345",
        ];
        let pre = [
            serde_json::json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}),
            serde_json::json!({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}),
            serde_json::json!({"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": "[a-z]+"}, "behavior": "Isolated", "invert": false},
                {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]}),
        ];
        for pre_tokenizer in &pre {
            for ignore_merges in [false, true] {
                let json = serde_json::json!({
                    "version": "1.0", "truncation": null, "padding": null,
                    "added_tokens": [{"id": 300, "content": "<|end|>", "single_word": false, "lstrip": false,
                                      "rstrip": false, "normalized": false, "special": true}],
                    "normalizer": null, "pre_tokenizer": pre_tokenizer,
                    "post_processor": {"type": "TemplateProcessing",
                        "single": [{"SpecialToken": {"id": "<|end|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                        "special_tokens": {"<|end|>": {"id": "<|end|>", "ids": [300], "tokens": ["<|end|>"]}}},
                    "decoder": null,
                    "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                              "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
                              "ignore_merges": ignore_merges, "vocab": vocab, "merges": merges}
                });
                let bytes = serde_json::to_vec(&json).unwrap();
                let fast = TextTokenizer::from_bytes(&bytes, true).unwrap();
                let slow = TextTokenizer::from_bytes(&bytes, false).unwrap();
                assert!(fast.is_fast() && !slow.is_fast());
                for text in texts {
                    for special in [true, false] {
                        assert_eq!(
                            fast.encode_text(text, special).unwrap(),
                            slow.encode_text(text, special).unwrap(),
                            "{pre_tokenizer} ignore_merges={ignore_merges} {text:?}"
                        );
                    }
                }
            }
        }
    }
}
