//! Document tags where the HTML standard says they make nothing: a second `<html>` or `<body>` start tag
//! inside the body (CMS fragments pasted whole into a page: a search box's template with its own `<html
//! xmlns=...>`), and `</body>` / `</html>` before the end of the page. Both the rules and the shipped block
//! model must still find the article after them.

use super::tests::{page, run, ARTICLE};
use super::tests_model::text_of;

/// A menu, hidden on small screens, whose search box is a whole document fragment (`<html ...>`, never
/// closed), then the article.
/// Seen red before the builder ignored the second `<html>`: it was pushed as a scope boundary, no `</div>`
/// closed past it, the article nested inside the menu (`hidden-xs`: hidden) and was lost, to the rules and the
/// model alike.
#[test]
fn a_stray_html_tag_in_a_menu_does_not_swallow_the_article() {
    let menu = "<div class=\"container-header\"><div class=\"row navigation hidden-xs\"><a href=/a>Home</a>\
                <a href=/b>Topics</a><div class=\"search collapse\"><html xmlns=\"http://www.w3.org/1999/xhtml\" \
                lang=\"en\"><div class=\"box\"><form action=/s><input name=q></form></div></div></div></div>";
    let html = page(&format!(
        "{menu}<div class=\"blog-detail\"><h1>Flood in the lower town</h1>{ARTICLE}</div>"
    ));
    for text in [run(&html).text, text_of(&html)] {
        assert!(text.contains("The river rose three metres"), "{text}");
        assert!(text.contains("forty volunteers"), "{text}");
        assert!(!text.contains("Topics"), "{text}");
    }
    // the first `<html lang>` is the page's language, not the fragment's
    assert_eq!(run(&html).html_lang, "en-GB");
}

/// `</body></html>` in the middle of a page (a template that ends the document early, then more markup):
/// what follows still reads, in the article's section. Seen red before the builder ignored them: `</body>`
/// closed the `<article>`, and its second half was text outside any candidate, lost.
#[test]
fn an_early_end_of_body_does_not_cut_the_article() {
    let (first, second) =
        ARTICLE.split_at(ARTICLE.find("<h2>").expect("the article has a heading"));
    let html = page(&format!(
        "<nav><a href=/>Home</a></nav><main><article>{first}</body></html>{second}</article></main>\
         <footer><p>Copyright 2026 Daily Paper, all rights reserved.</p></footer>"
    ));
    for text in [run(&html).text, text_of(&html)] {
        assert!(text.contains("The river rose three metres"), "{text}");
        assert!(text.contains("forty volunteers"), "{text}");
    }
}
