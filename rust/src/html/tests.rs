//! Behaviour of the extractor on pages written for it: furniture around an article, and hostile input.

use std::time::{Duration, Instant};

use super::*;

const ARTICLE: &str = "<p>The river rose three metres overnight, flooding the lower town, and residents were moved to \
the school on the hill before dawn.</p>\n<p>Officials said the dam upstream held, but warned that more rain, \
expected on Friday, could push the water higher still, and asked people to stay away from the banks.</p>\n\
<h2>What comes next</h2>\n<p>Engineers will inspect the levees on Saturday, a spokesman said, and the army has \
sent two boats, a field kitchen and forty volunteers to help with the clean-up.</p>";

fn page(body: &str) -> String {
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

fn run(html: &str) -> Extracted {
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
        time_budget: Some(Duration::from_millis(1)),
    };
    let t = Instant::now();
    let cut = extract(html.as_bytes(), None, false, tight);
    assert!(cut.truncated);
    assert!(cut.text.len() < e.text.len());
    assert!(t.elapsed() < Duration::from_secs(5));
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
        let docs: Vec<_> = pages.iter().map(|p| dom::parse(p, None)).collect();
        let parse = t.elapsed();
        let t = Instant::now();
        let n: usize = docs.iter().map(|d| content::main_text(d).len()).sum();
        let content = t.elapsed();
        let t = Instant::now();
        let _: usize = pages.iter().map(|p| charset::decode(p, None).0.len()).sum();
        let decode = t.elapsed();
        let nodes: usize = docs.iter().map(|d| d.nodes.len()).sum();
        println!("{} pages: parse {parse:?}, content {content:?}, decode {decode:?}; {nodes} nodes, {n} bytes", pages.len());
    }
}
