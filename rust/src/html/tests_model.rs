//! The failure classes seen on pages mdf was never tuned on (issue 49), each on a synthetic page, with the
//! shipped block model, `html_extract`'s default (the rules alone fix the first only): a page without `<html>`, `<body>` or any `<div>`; a sidebar promo box that outscores
//! a short article; an author bio that outscores an article spread over many wrappers; a long list of
//! related links that outscores a short article. None of them names a site or a dev page's class.
//!
//! What is fixed on the last three is that the article is no longer lost: on eefbc81 the output was the box,
//! the bio or the list *instead of* the article. The shipped model still keeps the box, the bio and the list
//! *beside* the article on these pages (in every `favor` mode): they are long, comma-rich prose or headline
//! links of the kind it learned to keep, so the tests do not claim they are dropped.

use super::tests::page;
use super::*;

const PROSE: [&str; 4] = [
    "The council met on Tuesday evening to discuss the new cycle lanes on the main road, which have \
     divided the town since the first plans were shown last spring.",
    "Residents who live along the route said the works had closed their driveways for weeks, while \
     shop owners worried that fewer parking spaces would mean fewer customers.",
    "The mayor said the lanes would be finished before the summer holidays and that the town had \
     secured a grant to plant trees along the whole length of the road.",
    "A second meeting is planned for next month, when the engineers will present the final design \
     and answer questions from the public about the junction by the station.",
];

fn paragraphs() -> String {
    PROSE.iter().map(|p| format!("<p>{p}</p>")).collect()
}

/// The article as one block of text broken by `<br><br>` (older CMSs, forums and mail archives write it so):
/// one block, so it scores as one paragraph however long it is.
fn br_text() -> String {
    PROSE.join("<br><br>")
}

/// The text the shipped block model gives (`html_extract(model=html_block_model())`).
pub(super) fn text_of(html: &str) -> String {
    let opts = Options {
        model: Some(content::model::shipped()),
        ..Options::default()
    };
    extract(html.as_bytes(), None, false, opts).text
}

fn assert_article(text: &str) {
    for p in PROSE {
        assert!(text.contains(p), "lost {:?} in:\n{text}", &p[..40]);
    }
}

/// A page of bare paragraphs (no `<html>`, `<head>`, `<body>` or `<div>`: the parser implies the body)
/// gives its paragraphs, by the rules alone and by the model. Seen red on eefbc81: empty text (no
/// paragraph had a scorable parent, as the implied body is the tree's root).
#[test]
fn bare_paragraphs_without_any_wrapper_give_their_text() {
    let html = format!("<h1>Cycle lanes</h1>{}", paragraphs());
    assert_article(&extract(html.as_bytes(), None, false, Options::default()).text);
    assert_article(&text_of(&html));
}

/// An article beside a sidebar column whose box offers a white paper in one long, comma-rich paragraph:
/// the article is kept. Seen red on eefbc81: the output was the box alone (its paragraph
/// outscored the article's one block, and the article's column, a sibling high up, did not join).
#[test]
fn sidebar_white_paper_box_does_not_replace_the_article() {
    let promo = "Our free white paper explains, step by step, how councils, planners, engineers, cyclists, \
                 residents, shop owners, and local groups can work together, plan, fund, build, and maintain \
                 safe, green, and popular streets, with twelve case studies, checklists, templates, and \
                 interviews, in forty pages";
    let html = page(&format!(
        "<div class=\"col-a\"><div class=\"inner\"><h1>Cycle lanes divide the town</h1>\
         <div class=\"meta\">12 May 2024</div><div class=\"text\">{}</div></div></div>\
         <div class=\"col-b\"><div class=\"box\"><h3>Free White Paper</h3><p>{promo}.</p>\
         <p><a href=\"/download\">Download now</a></p></div></div>",
        br_text()
    ));
    let text = text_of(&html);
    assert_article(&text);
}

/// An article and, in a column of its own, an author bio with many commas and the publisher's address:
/// the article is kept, not the bio alone. Seen red on eefbc81: the output was the bio.
#[test]
fn author_bio_does_not_replace_the_article() {
    let bio = "Jane Miller is a reporter, editor, and photographer, who has covered transport, housing, \
               schools, planning, and local politics, in this town, the county, and the region, since 2009, \
               and she lives, with her family, two cats, and a bicycle, near the station";
    let html = page(&format!(
        "<div class=\"col-a\"><div class=\"inner\"><h1>Cycle lanes divide the town</h1>\
         <div class=\"text\">{}</div></div></div><div class=\"col-b\"><div class=\"person\">\
         <img src=\"/jane.jpg\"><p>{bio}.</p></div><div class=\"office\"><p>Daily Paper, 1 High Street, \
         Springfield, Tel. 0123 456789</p></div></div>",
        br_text()
    ));
    let text = text_of(&html);
    assert_article(&text);
}

/// A short article followed by a long list of related stories (each a headline link and a teaser line):
/// the article is kept and the list is not taken for it. Seen red on eefbc81: the output was the list.
#[test]
fn long_related_links_list_does_not_replace_the_article() {
    let items: String = (0..24)
        .map(|i| {
            format!(
                "<li><a href=\"/story/{i}\">Story number {i} about the town, its people, its streets and \
                 its future</a><span>A short teaser, with a comma, for story {i}.</span></li>"
            )
        })
        .collect();
    let html = page(&format!(
        "<div class=\"content\"><h1>Cycle lanes divide the town</h1><div class=\"text\">{}</div></div>\
         <div class=\"more\"><h3>More from the town</h3><ul class=\"list\">{items}</ul></div>",
        br_text()
    ));
    let text = text_of(&html);
    assert_article(&text);
}

/// A model whose every unit scores logit 0, at probability thresholds 0.5 (logit 0), with `region`.
fn constant_model(region: &str) -> content::model::Model {
    model_scoring(region, 0.0)
}

/// A model whose every unit scores `logit`, at probability thresholds 0.5 (logit 0), with `region`.
fn model_scoring(region: &str, logit: f64) -> content::model::Model {
    let features = content::features::FEATURES.join(" ");
    let text = format!(
        "mdf-html-blocks 1\nfeatures {} {features}\nthresholds 0.5 0.5 0.5\n{region}base {logit}\ntree 1\nleaf 0.0\n",
        content::features::N
    );
    content::model::Model::parse(&text).expect("the test model parses")
}

/// When the trees keep nothing of a page on which the rules found prose, the rules' pick is written: a model
/// that keeps no unit still gives the article (every `favor`), and a page of links alone stays empty. Seen red
/// without the fallback: empty text for the article (a held-out news page of the AEB lost its whole article
/// so after a retraining).
#[test]
fn trees_that_keep_nothing_leave_the_rules_pick() {
    let none = model_scoring("", -10.0);
    let text = |html: &str, favor: Favor| {
        let opts = Options {
            model: Some(&none),
            favor,
            ..Options::default()
        };
        extract(html.as_bytes(), None, false, opts).text
    };
    let article = page(&format!(
        "<h1>Cycle lanes divide the town</h1><div class=\"text\">{}</div>",
        paragraphs()
    ));
    let links: String = (0..12)
        .map(|i| {
            format!(
                "<li><a href=\"/s/{i}\">Story number {i} about the town and its streets</a></li>"
            )
        })
        .collect();
    let menu = page(&format!("<ul>{links}</ul>"));
    for favor in [Favor::Precision, Favor::Balanced, Favor::Recall] {
        assert_article(&text(&article, favor));
        assert_eq!(text(&menu, favor), "", "{favor:?}");
    }
}

/// The `region` line lowers the threshold inside the rules' region and raises it elsewhere: with every unit at
/// the bare threshold, `region 1 1` keeps the article the rules chose and drops a sentence in a column of its
/// own, which the model without the line keeps. Seen red with the offsets parsed but not applied (the far
/// sentence kept). A region line without two numbers is refused with its line number.
#[test]
fn region_offsets_favor_the_rules_choice() {
    let far = "Opening hours of the town library are listed on the back page of every issue.";
    let html = page(&format!(
        "<div class=\"a\"><div class=\"b\">{}</div></div><div class=\"c\"><div class=\"d\"><p>{far}</p></div></div>",
        paragraphs()
    ));
    let text = |m: &content::model::Model| {
        let opts = Options {
            model: Some(m),
            ..Options::default()
        };
        extract(html.as_bytes(), None, false, opts).text
    };
    let (alone, region) = (
        text(&constant_model("")),
        text(&constant_model("region 1 1\n")),
    );
    assert_article(&alone);
    assert!(alone.contains(far), "{alone}");
    assert_article(&region);
    assert!(!region.contains(far), "{region}");
    let bad = content::model::Model::parse(&format!(
        "mdf-html-blocks 1\nfeatures {} {}\nthresholds 0.5 0.5 0.5\nregion 1\nbase 0.0\n",
        content::features::N,
        content::features::FEATURES.join(" ")
    ))
    .unwrap_err();
    assert_eq!(
        bad,
        "block model, line 4: expected `region <inside> <outside>`"
    );
}
