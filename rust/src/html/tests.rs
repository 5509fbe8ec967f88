//! Behaviour of the extractor on pages written for it: furniture around an article, and hostile input.

use std::time::{Duration, Instant};

use super::*;

pub(super) const ARTICLE: &str = "<p>The river rose three metres overnight, flooding the lower town, and residents were moved to \
the school on the hill before dawn.</p>\n<p>Officials said the dam upstream held, but warned that more rain, \
expected on Friday, could push the water higher still, and asked people to stay away from the banks.</p>\n\
<h2>What comes next</h2>\n<p>Engineers will inspect the levees on Saturday, a spokesman said, and the army has \
sent two boats, a field kitchen and forty volunteers to help with the clean-up.</p>";

pub(super) fn page(body: &str) -> String {
    format!(
        "<!DOCTYPE html><html lang=\"en-GB\"><head><meta charset=\"utf-8\"><title>Flood in the lower town | \
         Daily Paper</title><link rel=\"canonical\" href=\"https://paper.example/flood\">\
         <meta name=\"description\" content=\"The river rose.\"><style>p{{color:red}}</style>\
         <script>var x = '<p>not text</p>';</script></head><body>{body}</body></html>"
    )
}

fn furniture_page() -> String {
    let nav =
        "<nav><ul><li><a href=/>Home</a></li><li><a href=/world>World news and politics</a></li>\
               <li><a href=/sport>Sport</a></li></ul></nav>";
    let cookie =
        "<div class=\"cookie-banner\">We use cookies to improve your experience, to show ads and \
                  to measure traffic. <button>Accept all</button></div>";
    let related = "<div class=\"story-links\"><h3>More stories</h3><ul><li><a href=/a>Storm hits the coast \
                   overnight, thousands without power</a></li><li><a href=/b>Council approves the new \
                   budget after a long debate</a></li><li><a href=/c>Local team wins the cup final in \
                   extra time</a></li></ul></div>";
    let comments = "<section id=\"comments\"><h3>12 comments</h3><div class=\"comment\"><p>Terrible news, \
                    thoughts with everyone, stay safe, and thanks to the volunteers.</p></div></section>";
    let footer =
        "<footer><p>Copyright 2026 Daily Paper, all rights reserved, reproduction forbidden.</p>\
                  </footer>";
    page(&format!(
        "{nav}{cookie}<header><h1>Flood in the lower town</h1></header><main><article><div \
         class=\"byline\">By A. Reporter</div>{ARTICLE}{related}</article></main>{comments}{footer}"
    ))
}

pub(super) fn run(html: &str) -> Extracted {
    extract(html.as_bytes(), None, false, Options::default())
}

#[test]
fn keeps_the_article_and_drops_furniture() {
    let e = run(&furniture_page());
    assert!(
        e.text.starts_with("The river rose three metres"),
        "{}",
        e.text
    );
    assert!(e.text.contains("What comes next"));
    assert!(e.text.ends_with("to help with the clean-up."), "{}", e.text);
    for junk in [
        "Home",
        "cookies",
        "More stories",
        "Storm hits",
        "comments",
        "Terrible",
        "Copyright",
        "not text",
        "color",
    ] {
        assert!(!e.text.contains(junk), "{junk} leaked into: {}", e.text);
    }
    // paragraphs are separated by blank lines
    assert_eq!(e.text.split("\n\n").count(), 4, "{}", e.text);
    assert_eq!(e.title, "Flood in the lower town | Daily Paper");
    assert_eq!(e.canonical_url, "https://paper.example/flood");
    assert_eq!(e.html_lang, "en-GB");
    assert_eq!(e.description, "The river rose.");
    assert_eq!(e.encoding, "UTF-8");
}

#[test]
fn div_soup_without_semantic_tags() {
    let paras: String = ARTICLE
        .replace("<p>", "<div class=\"txt\">")
        .replace("</p>", "</div>");
    let html = page(&format!(
        "<div id=\"top-menu\"><a href=/>Home</a> | <a href=/x>About us</a> | <a href=/y>Contact</a></div>\
         <div id=\"wrap\"><div class=\"col-left\">{paras}</div><div class=\"sidebar\"><div>Most read: \
         <a href=/1>one long headline here</a>, <a href=/2>another long headline there</a></div></div></div>"
    ));
    let e = run(&html);
    assert!(
        e.text.contains("The river rose") && e.text.contains("clean-up."),
        "{}",
        e.text
    );
    assert!(
        !e.text.contains("Most read") && !e.text.contains("About us"),
        "{}",
        e.text
    );
}

#[test]
fn text_beside_blocks_in_a_div_scores_that_div() {
    // one long paragraph written straight into a div that also holds a heading and images, beside a
    // link-heavy menu in the same row
    let menu: String = (0..40)
        .map(|i| format!("<li><a href=/m{i}>Menu entry number {i}</a></li>"))
        .collect();
    let story = "The council approved the new library on Monday, after a year of delays, and building work \
                 starts in spring. The old reading room stays open until the move, the mayor said, and the \
                 children's section will double in size, with a new room for homework and a small stage.";
    let html = page(&format!(
        "<div class=row><div class=col-3><ul>{menu}</ul></div><div class=col-9><p class=t>Library</p>\
         <img src=a.jpg><img src=b.jpg>{story}<br><br><div class=tools><a href=/p>Print</a></div></div></div>\
         <div class=foot><div>Town Hall, Main Square 1, open Monday to Friday, nine to five.</div></div>"
    ));
    let e = run(&html);
    assert!(e.text.contains("The council approved"), "{}", e.text);
    assert!(
        !e.text.contains("Menu entry") && !e.text.contains("Town Hall"),
        "{}",
        e.text
    );
}

#[test]
fn a_short_article_is_not_traded_for_its_comment_thread() {
    // under CHAR_THRESHOLD but over half of it: real prose, kept rather than the longer thread
    let comments: String = (0..12)
        .map(|i| format!("<li><p>Comment {i}: I read the whole thing, and I disagree with most of it, though the \
                          part about funding was fair, and the numbers seem right to me.</p></li>"))
        .collect();
    let html = page(&format!(
        "<article class=post><h1>Open thread</h1><div class=entry-content><p>This is our open thread for the \
         quarter: ask us anything about our work, our research or the blog, in the comments below.</p>\
         <p>We will answer every question within a week, as always, and thank you for reading, sharing \
         and sending us your ideas over the past three months.</p></div>\
         </article><div id=comments><ol class=comment-list>{comments}</ol></div>"
    ));
    let e = run(&html);
    assert!(e.text.starts_with("This is our open thread"), "{}", e.text);
    assert!(!e.text.contains("Comment 3"), "{}", e.text);
}

#[test]
fn no_main_text_gives_empty_text() {
    for body in [
        "",
        "<nav><a href=/>Home</a> <a href=/a>About</a></nav>",
        "<div><a href=/a>A</a></div><footer>(c) 2026</footer>",
        "<img src=x.png>",
    ] {
        let e = run(&page(body));
        assert_eq!(e.text, "", "body {body:?}");
        assert_eq!(e.title, "Flood in the lower town | Daily Paper");
    }
    assert_eq!(run("").text, "");
}

#[test]
fn malformed_markup_still_reads() {
    let html = "<html><body><div><p>First paragraph of the story, unclosed, with enough words to count\
                <p>Second paragraph, also unclosed, with a <b>bold <i>misnested</b> phrase</i> inside it, \
                which browsers repair<div>Third part, in a div that never closes, talking about things, \
                at length, for the score</span></td></table><p attr=\"unterminated>Tail";
    let e = run(html);
    assert!(e.text.contains("First paragraph"), "{}", e.text);
    assert!(e.text.contains("misnested phrase inside it"), "{}", e.text);
    assert!(e.text.contains("Third part"), "{}", e.text);
}

#[test]
fn deep_nesting_is_flattened_not_recursed() {
    let depth = 100_000;
    let mut html = String::from("<html><body>");
    html.push_str(&"<div>".repeat(depth));
    html.push_str("<p>Deep inside a hundred thousand divs, this sentence is still here, and it is long enough.</p>");
    html.push_str(&"</div>".repeat(depth));
    html.push_str(&"<span><b>".repeat(depth));
    let t = Instant::now();
    let e = run(&html);
    assert!(t.elapsed() < Duration::from_secs(20));
    assert!(e.text.contains("Deep inside"), "{}", e.text);
}

#[test]
fn big_page_finishes_and_budget_cuts_it() {
    let para = "<p>A paragraph of a very long page, repeated many times, so that the page weighs ten megabytes \
                and the extractor has to show that it stays linear.</p>\n";
    let html = page(&para.repeat(10_000_000 / para.len()));
    assert!(html.len() >= 10_000_000);
    let e = run(&html);
    assert!(!e.truncated);
    assert!(e.text.len() > 5_000_000);
    let tight = Options {
        max_bytes: 1_000_000,
        ..Options::default()
    };
    let cut = extract(html.as_bytes(), None, false, tight);
    assert!(cut.truncated);
    assert!(cut.text.len() < 1_000_000 && cut.text.len() > 500_000);
    // the budget is in bytes, not time: the same page always gives the same text
    assert_eq!(cut, extract(html.as_bytes(), None, false, tight));
    // a budget that ends inside a multi-byte character cuts at the character's start
    let accented = page(&"<p>é</p>".repeat(400_000));
    let inside = (1_000_000..)
        .find(|&i| !accented.is_char_boundary(i))
        .unwrap();
    let opts = Options {
        max_bytes: inside,
        ..Options::default()
    };
    let cut = extract(accented.as_bytes(), None, false, opts);
    assert!(cut.truncated && cut.error.is_empty());
}

#[test]
fn binary_junk_and_odd_bytes_never_panic() {
    let mut state = 0x1234_5678_u64;
    for len in [0, 1, 2, 7, 100, 5_000, 200_000] {
        let junk: Vec<u8> = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect();
        let e = extract(&junk, None, false, Options::default());
        assert!(e.text.len() <= len * 3 + 16);
        let _ = extract(&junk, Some("shift_jis"), false, Options::default());
        let _ = extract(&junk, None, true, Options::default());
    }
    for odd in [
        "<",
        "<!--",
        "<![CDATA[",
        "</",
        "<a href='",
        "&#xFFFFFFFF;",
        "<svg><p>x",
        "<table><td>",
    ] {
        let _ = run(odd);
    }
}

#[test]
fn skipped_elements_hide_their_text() {
    let html = page(&format!(
        "<div hidden><p>Hidden paragraph that should not appear anywhere, not even once, really.</p></div>\
         <div style=\"display: none\"><p>Also hidden by style, long enough to be scored by the extractor.</p></div>\
         <svg><text>svg text</text></svg><noscript>Enable JavaScript to read this site</noscript>\
         <form><select><option>Option text</option></select></form><article>{ARTICLE}</article>"
    ));
    let e = run(&html);
    for junk in [
        "Hidden",
        "Also hidden",
        "svg text",
        "Enable JavaScript",
        "Option text",
    ] {
        assert!(!e.text.contains(junk), "{junk}: {}", e.text);
    }
    assert!(e.text.starts_with("The river rose"));
}

#[test]
fn column_rows_nulls_and_charsets() {
    use arrow_array::{Array, BinaryArray, StringArray as S};
    let latin = b"<html><body><article><p>Caf\xe9 cr\xe8me, na\xefve fa\xe7ade, r\xe9sum\xe9 and more words \
                  for the score</p></article></body></html>";
    let pages = BinaryArray::from(vec![Some(&latin[..]), None, Some(&b""[..])]);
    let charsets = S::from(vec![Some("iso-8859-1"), None, None]);
    let col = BytesColumn::from_chunks(&[pages.to_data()], true).unwrap();
    let cs = BytesColumn::from_chunks(&[charsets.to_data()], false).unwrap();
    let rows = extract_column(&col, Some(&cs), Options::default()).unwrap();
    assert!(rows[0]
        .as_ref()
        .unwrap()
        .text
        .starts_with("Café crème, naïve façade"));
    assert!(rows[1].is_none());
    assert_eq!(rows[2].as_ref().unwrap().text, "");
    let out = to_struct(&rows, true);
    assert_eq!(out.len(), 3);
    assert!(out.is_null(1));
    let short = BytesColumn::from_chunks(&[S::from(vec!["x"]).to_data()], false).unwrap();
    assert!(extract_column(&col, Some(&short), Options::default()).is_err());
}

/// Where the time goes on a folder of pages: `MDF_HTML_PAGES=/dir cargo test --release -- --ignored --nocapture profile_pages`.
#[test]
#[ignore]
fn profile_pages() {
    let Ok(dir) = std::env::var("MDF_HTML_PAGES") else {
        return;
    };
    let pages: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    for _ in 0..3 {
        let t = Instant::now();
        let docs: Vec<_> = pages.iter().map(|p| dom::parse(p)).collect();
        let parse = t.elapsed();
        let t = Instant::now();
        let n: usize = docs
            .iter()
            .map(|d| content::main_text(d, Favor::Balanced, None).len())
            .sum();
        let content = t.elapsed();
        let t = Instant::now();
        let _: usize = pages.iter().map(|p| charset::decode(p, None).0.len()).sum();
        let decode = t.elapsed();
        let nodes: usize = docs.iter().map(|d| d.nodes.len()).sum();
        println!("{} pages: parse {parse:?}, content {content:?}, decode {decode:?}; {nodes} nodes, {n} bytes", pages.len());
    }
}

/// Ancestors of the first text node containing `MDF_HTML_NEEDLE` in page `MDF_HTML_PAGE` (debugging aid).
#[test]
#[ignore]
fn debug_path() {
    let (Ok(page), Ok(needle)) = (
        std::env::var("MDF_HTML_PAGE"),
        std::env::var("MDF_HTML_NEEDLE"),
    ) else {
        return;
    };
    let html = std::fs::read(page).unwrap();
    let doc = dom::parse(&html);
    let i = doc
        .nodes
        .iter()
        .position(|n| {
            n.tag == tags::Tag::Text && String::from_utf8_lossy(doc.text_of(n)).contains(&needle)
        })
        .expect("needle");
    let mut a = i;
    while a != 0 {
        let n = &doc.nodes[a];
        println!(
            "{a} {:?} flags={} weight={} end={}",
            n.tag, n.flags, n.weight, n.end
        );
        a = n.parent as usize;
    }
    if let Ok(at) = std::env::var("MDF_HTML_NODE") {
        let at: usize = at.parse().unwrap();
        let mut c = at + 1;
        while c < doc.nodes[at].end as usize {
            let n = &doc.nodes[c];
            let txt: String = if n.tag == tags::Tag::Text {
                String::from_utf8_lossy(doc.text_of(n))
                    .chars()
                    .take(40)
                    .collect()
            } else {
                String::new()
            };
            println!("  child {c} {:?} size {} {txt}", n.tag, n.end as usize - c);
            c = n.end as usize;
        }
    }
    for line in content::explain(&doc, Favor::Balanced, i) {
        println!("{line}");
    }
}
