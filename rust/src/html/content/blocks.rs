//! Main text by the block model: Readability's pick becomes features of every unit, the model scores each
//! unit, and the units that reach the favor mode's threshold are written out in document order.
//!
//! Why the rules stay underneath: where the article is on a page is what Readability's scoring finds well
//! (one dense region of prose), and the model reads its choice as a feature; what the rules get wrong --
//! a promo box that outscores a short article, a byline box taken for the article, a list of related links
//! kept beside it, a lede or a last paragraph left outside the chosen subtree -- is what the model learns
//! from labelled pages of many sites, with the text, tags, class words, containers and neighbours of each
//! unit.

use super::features::{FEATURES, N};
use super::model::Model;
use super::page::Page;
use super::pick;
use crate::html::dom::Doc;
use crate::html::tags::Tag;
use crate::html::Favor;

/// The main text of `doc` as `model` chooses it under `favor`: empty when no unit reaches the threshold,
/// except that `Favor::Recall` then keeps the short body of a page without a block of text
/// ([`super::short_page_text`]: a one-line note is what recall asks for).
pub fn main_text(doc: &Doc, favor: Favor, model: &Model) -> String {
    let page = page(doc);
    let (inside, outside) = (model.threshold(favor, true), model.threshold(favor, false));
    let region = region_features();
    let link_density = feature("link_density");
    let thread = CommentThread::new();
    let mut f = [0f32; N];
    let mut prose = false;
    let mut rules_prose = 0u32;
    let mut keep: Vec<bool> = (0..page.units.len())
        .map(|u| {
            page.features(u, &mut f);
            let in_region = region.iter().any(|&i| f[i] > 0.0);
            let kept =
                !thread.holds(&f) && model.reaches(&f, if in_region { inside } else { outside });
            prose |= kept && f[link_density] < 1.0;
            if f[link_density] < 0.5 {
                rules_prose += page.written[u];
            }
            kept
        })
        .collect();
    if !prose {
        // Nothing kept but link text (a menu, a list of links): that is no page's main text. No labelled page
        // looks like this, so the trees' answer there is an extrapolation; a retrained model kept one menu
        // item of a links-only page (plugins/mdf-text's test_page_without_main_text_keeps_empty_text).
        keep.fill(false);
        if rules_prose >= RULES_FALLBACK_CHARS {
            // The trees keep nothing of a page on which the rules found a block of prose: every labelled
            // page the trees learnt from has main text, so "none" is an extrapolation too, and the rules'
            // pick is the better guess (a held-out news page lost its whole article this way, page F1
            // 0.90 -> 0 after a retraining, while the rules wrote it).
            for (u, k) in keep.iter_mut().enumerate() {
                *k = page.written[u] > 0;
            }
        }
    }
    let text = write(&page, &keep);
    if text.is_empty() && favor == Favor::Recall {
        return super::short_page_text(doc);
    }
    text
}

/// Characters of prose (units under half link text) the rules must write for their pick to stand in when the
/// trees keep nothing: a few sentences, more than a menu's or a cookie notice's stray line.
const RULES_FALLBACK_CHARS: u32 = 250;

/// A unit of a comment thread: a class or id word of comments at most [`CommentThread::LEVELS`] up with no
/// content word nearer (`post-comments` is both, and stays with the model), and the rules excluded the unit and
/// wrote none of it. Such a unit is never kept, whatever the trees say: reader comments are not the page's
/// main text (trafilatura drops them unless asked, Readability's unlikely list strips them), and a comment is
/// prose, so the only thing that tells it from the article is the container's name, which labelled pages say
/// little about (trafeval-dev's snippets rarely fall in threads: of the 3,766 such units of the 817 labelled
/// pages, 734 are labelled "not main text" and 11 "main text", 0.1 % of the main-text weight). Without the
/// guard a retrained model kept a one-comment thread beside a short article (plugins/mdf-text's
/// `test_article_kept_furniture_dropped`).
struct CommentThread {
    comment: usize,
    content: usize,
    excluded: usize,
    written: usize,
}

impl CommentThread {
    const LEVELS: f32 = 3.0;

    fn new() -> Self {
        CommentThread {
            comment: feature("near_comment"),
            content: feature("near_content"),
            excluded: feature("excluded"),
            written: feature("written"),
        }
    }

    fn holds(&self, f: &[f32; N]) -> bool {
        f[self.comment] <= Self::LEVELS
            && f[self.content] > f[self.comment]
            && f[self.excluded] > 0.0
            && f[self.written] == 0.0
    }
}

/// Indices of the features that place a unit in the rules' region: the rules write some of its text, its
/// parent's or its grandparent's (the same test as `train_html_blocks.py`'s `REGION_FEATURES`).
fn region_features() -> [usize; 3] {
    ["written", "parent_written", "gparent_written"].map(feature)
}

fn feature(name: &str) -> usize {
    FEATURES
        .iter()
        .position(|f| *f == name)
        .expect("the feature is in FEATURES")
}

/// The units of `doc` with what the rules picked (balanced mode: the model was trained on its features).
pub fn page(doc: &Doc) -> Page<'_> {
    let (chosen, _) = pick(doc, Favor::Balanced);
    let attempt = chosen.as_ref().map_or(4, |p| p.attempt);
    Page::new(doc, chosen, attempt)
}

fn is_item(tag: Tag) -> bool {
    matches!(tag, Tag::Li | Tag::Td | Tag::Th | Tag::Dd | Tag::Dt)
}

/// The kept units' text: paragraphs separated by a blank line, items of one list or table by a line break.
pub fn write(page: &Page<'_>, keep: &[bool]) -> String {
    let nodes = &page.doc.nodes;
    let mut out: Vec<u8> = Vec::new();
    let mut last: Option<usize> = None;
    for (u, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
        let start = out.len();
        if let Some(prev) = last {
            let (a, b) = (
                page.units[prev].block as usize,
                page.units[u].block as usize,
            );
            let (pa, pb) = (nodes[a].parent as usize, nodes[b].parent as usize);
            let same_list = is_item(nodes[a].tag)
                && is_item(nodes[b].tag)
                && (pa == pb || nodes[pa].parent == nodes[pb].parent);
            out.extend_from_slice(if same_list { b"\n" } else { b"\n\n" });
        }
        let text_start = out.len();
        page.unit_text(u, &mut out);
        if out.len() <= text_start {
            out.truncate(start);
            continue;
        }
        last = Some(u);
    }
    String::from_utf8_lossy(&out).into_owned()
}
