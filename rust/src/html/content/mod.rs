//! Main-content choice on a [`Doc`]: Readability's scoring, on flat arrays.
//!
//! Every block with at least 25 characters of its own text scores `1 + commas + min(chars / 100, 3)` and
//! hands it to five ancestors (full, half, then a third per level), which start from a tag score and the
//! class weight. A candidate's final score is scaled by `1 - link density`. The best candidate may move to an
//! ancestor that holds several near-best ones, or up while scores rise; then its siblings join when they
//! score well or read like prose. Inside the chosen subtrees, lists, tables and divs that look like furniture
//! (link-dense, image- or form-heavy, negative class) are dropped and what remains is written out as
//! paragraphs. Four attempts loosen the rules in Readability's order until one yields 500 characters.
//!
//! This module holds the attempts' rules, the per-node arrays one attempt works on (`Pass`) and the loop
//! over attempts; `measure` fills the arrays, `select` scores and picks the subtrees, `write` cleans and
//! writes them out.

use super::dom::Doc;
use super::Favor;

pub mod blocks;
pub mod features;
pub mod forest;
mod measure;
pub mod model;
pub mod page;
mod select;
pub mod units;
mod write;

/// Characters an attempt must reach before the looser ones are skipped (Readability's `charThreshold`).
pub const CHAR_THRESHOLD: usize = 500;
/// A block shorter than this scores nothing (Readability's 25).
const MIN_BLOCK_CHARS: u32 = 25;

#[derive(Debug, Clone, Copy)]
struct Rules {
    strip_unlikely: bool,
    weight_classes: bool,
    clean_conditionally: bool,
}

const ATTEMPTS: [Rules; 4] = [
    Rules {
        strip_unlikely: true,
        weight_classes: true,
        clean_conditionally: true,
    },
    Rules {
        strip_unlikely: false,
        weight_classes: true,
        clean_conditionally: true,
    },
    Rules {
        strip_unlikely: false,
        weight_classes: false,
        clean_conditionally: true,
    },
    Rules {
        strip_unlikely: false,
        weight_classes: false,
        clean_conditionally: false,
    },
];

/// Per-subtree sums over the nodes an attempt keeps.
#[derive(Default, Clone, Copy)]
struct Sums {
    chars: u32,
    link: u32,
    commas: u32,
    p: u32,
    img: u32,
    li: u32,
    input: u32,
    embed: u32,
    th: u32,
    tables: u32,
    elems: u32,
}

/// One attempt over a page: per-node arrays indexed like [`Doc::nodes`].
struct Pass<'d> {
    doc: &'d Doc,
    rules: Rules,
    favor: Favor,
    excl: Vec<bool>,
    sums: Vec<Sums>,
    own_chars: Vec<u32>,
    own_commas: Vec<u32>,
    /// A div with block children and text of its own: Readability wraps that text in a new `<p>` child,
    /// so the div itself is the first ancestor to score.
    mixed: Vec<bool>,
    score: Vec<f32>,
    scored: Vec<bool>,
}

/// What the rules chose on a page: the attempt's pass, the subtrees kept and its top candidate.
pub(crate) struct Pick<'d> {
    pass: Pass<'d>,
    roots: Vec<usize>,
    top: usize,
    /// Index of the attempt in [`ATTEMPTS`].
    attempt: usize,
}

/// The main text of `doc`: by the block `model` when there is one, else by the rules alone.
pub fn main_text(doc: &Doc, favor: Favor, model: Option<&model::Model>) -> String {
    match model {
        Some(m) => blocks::main_text(doc, favor, m),
        None => rules_text(doc, favor),
    }
}

/// The rules' main text of `doc` (empty when no block of the page has text enough to score, except for the
/// short pages `Favor::Recall` keeps: [`short_page_text`]).
pub fn rules_text(doc: &Doc, favor: Favor) -> String {
    match pick(doc, favor) {
        (_, text) if !text.is_empty() => text,
        _ if favor == Favor::Recall => short_page_text(doc),
        _ => String::new(),
    }
}

/// Readability's attempts, in order, and the one kept with its text (`None` when no attempt found a
/// candidate).
///
/// Readability keeps the longest attempt when none reaches [`CHAR_THRESHOLD`]; that lets a short article
/// pick up its byline and share bar, or the comment thread next to it, from a looser attempt. Here a looser
/// attempt replaces a stricter one only when it at least doubles the text, and, when the stricter attempt
/// found a real piece of prose (half the threshold), only when it contains that prose: the sign that strict
/// rules cut the article itself rather than that loose rules found something else.
///
/// `Favor::Recall` tries every attempt: a looser one replaces the stricter when it contains the stricter's
/// top candidate and adds a quarter to the text (what strict rules cut from the article's own subtree).
pub(crate) fn pick(doc: &Doc, favor: Favor) -> (Option<Pick<'_>>, String) {
    let recall = favor == Favor::Recall;
    let mut best: Option<Pick<'_>> = None;
    let mut best_text = String::new();
    let mut best_chars = 0;
    for (attempt, rules) in ATTEMPTS.into_iter().enumerate() {
        let mut pass = Pass::new(doc, rules, favor);
        let cands = pass.score();
        let Some(top) = pass.top(cands) else { continue };
        let roots = pass.roots(top);
        let mut text = String::new();
        pass.write(&roots, &mut text);
        let chars = text.chars().count();
        if chars >= CHAR_THRESHOLD && best_chars == 0 && !recall {
            return (
                Some(Pick {
                    pass,
                    roots,
                    top,
                    attempt,
                }),
                text,
            );
        }
        let extends = |t: usize| {
            roots
                .iter()
                .any(|&r| r <= t && t < doc.nodes[r].end as usize)
        };
        let grows = if recall && best_chars >= CHAR_THRESHOLD {
            chars * 4 > best_chars * 5
        } else {
            chars > 2 * best_chars
        };
        let best_top = best.as_ref().map(|b| b.top);
        let replaces = grows && (best_chars < CHAR_THRESHOLD / 2 || best_top.is_some_and(extends));
        if replaces {
            best_text = text;
            best_chars = chars;
            best = Some(Pick {
                pass,
                roots,
                top,
                attempt,
            });
        }
        if best_chars >= CHAR_THRESHOLD && !recall {
            break;
        }
    }
    (best, best_text)
}

/// `Favor::Recall` on a page where no block has text enough to score (no attempt found a candidate): the
/// body's text without the furniture the strictest attempt excludes, when it is short (under [`CHAR_THRESHOLD`]) and at most
/// half links; else empty.
///
/// Why only then: a page without one block of 25 characters is a stub (a one-line note, a gallery of
/// captioned images, an error or redirect page, a login form), and `balanced` / `precision` keep the rule
/// "no main text gives an empty text", which pipelines use as their filter (`text != ""`). Recall mode is
/// asked to keep what may be content, and a short, mostly unlinked body is that; a long body made only of
/// short pieces, or a link-dominated one, is menus and tiles, which no mode keeps.
fn short_page_text(doc: &Doc) -> String {
    // furniture by tag, role and class is still dropped; conditional cleaning is not, for its 25-character
    // rule would drop every piece of a page whose pieces are all shorter than that
    let rules = Rules {
        clean_conditionally: false,
        ..ATTEMPTS[0]
    };
    let pass = Pass::new(doc, rules, Favor::Recall);
    let body = (1..doc.nodes.len())
        .find(|&i| doc.nodes[i].tag == super::tags::Tag::Body)
        .unwrap_or(0);
    let s = &pass.sums[body];
    if s.chars == 0 || s.chars as usize >= CHAR_THRESHOLD || s.link * 2 > s.chars {
        return String::new();
    }
    let mut text = String::new();
    pass.write(&[body], &mut text);
    text
}

/// Each attempt's top candidate, roots and text length, and which ancestors of node `at` (0: none) the
/// attempt excludes or cleans away (debugging aid for tests).
#[cfg(test)]
pub fn explain(doc: &Doc, favor: Favor, at: usize) -> Vec<String> {
    ATTEMPTS
        .iter()
        .map(|&rules| {
            let mut pass = Pass::new(doc, rules, favor);
            let cands = pass.score();
            let mut a = at;
            while a != 0 {
                let s = &pass.sums[a];
                if pass.excl[a] || pass.looks_like_furniture(a) {
                    println!(
                        "  drops {a} {:?} excl={} weight={} score={:.1} chars={} link={} p={} img={} li={} input={} embed={} commas={}",
                        doc.nodes[a].tag, pass.excl[a], pass.weight(a), pass.score[a], s.chars, s.link, s.p, s.img, s.li, s.input, s.embed, s.commas
                    );
                }
                a = doc.nodes[a].parent as usize;
            }
            let mut best = cands.clone();
            best.sort_by(|&a, &b| pass.score[b].total_cmp(&pass.score[a]));
            let best: Vec<String> = best
                .iter()
                .take(6)
                .map(|&c| {
                    format!(
                        "{c}:{:?}={:.1}/ld{:.2}",
                        doc.nodes[c].tag,
                        pass.score[c],
                        pass.link_density(c)
                    )
                })
                .collect();
            println!("cands {best:?}");
            let Some(top) = pass.top(cands) else {
                return format!("{rules:?}: none");
            };
            let roots = pass.roots(top);
            let parent = doc.nodes[top].parent as usize;
            let mut c = parent + 1;
            while parent != 0 && c < doc.nodes[parent].end as usize {
                let n = &doc.nodes[c];
                if n.tag != super::tags::Tag::Text {
                    println!(
                        "  sibling {c} {:?} scored={} score={:.1} chars={} ld={:.2} excl={}",
                        n.tag, pass.scored[c], pass.score[c], pass.sums[c].chars, pass.link_density(c), pass.excl[c]
                    );
                }
                c = n.end as usize;
            }
            let mut text = String::new();
            pass.write(&roots, &mut text);
            format!(
                "{rules:?}: top {top} ({:?}, score {:.1}) roots {roots:?} -> {} chars",
                doc.nodes[top].tag,
                pass.score[top],
                text.len()
            )
        })
        .collect()
}
