//! Pages built to crash the extractor (stack depth, size) and the per-page panic guard.

use super::*;

/// Hostile pages that crashed or could crash the process: each gives a row, none a signal. With upstream
/// html5gum (the `[patch.crates-io]` line of Cargo.toml removed) this test dies: "thread has overflowed
/// its stack", SIGABRT: seen.
#[test]
fn hostile_pages_never_overflow_the_stack() {
    let run_on_small_stack = |html: Vec<u8>| {
        // 2 MiB, the stack of a rayon thread
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || extract(&html, None, false, Options::default()))
            .unwrap()
            .join()
            .expect("extraction panicked")
    };
    let attrs = |n: usize, one: &dyn Fn(usize) -> String| {
        let list: Vec<String> = (0..n).map(one).collect();
        format!(
            "<p {}>hello</p><p>{}</p>",
            list.join(" "),
            "Main text here. ".repeat(50)
        )
        .into_bytes()
    };
    for html in [
        attrs(200_000, &|i| format!("data-a{i}=\"v {i}\"")),
        attrs(200_000, &|i| format!("class=\"c{i}\"")),
        attrs(200_000, &|i| format!("a{i}='v'")),
        attrs(200_000, &|i| format!("a{i}=v")),
        attrs(200_000, &|i| format!("a{i}")),
        format!(
            "<meta {}><p>x</p>",
            (0..200_000)
                .map(|i| format!("a{i}=\"v\""))
                .collect::<Vec<_>>()
                .join(" ")
        )
        .into_bytes(),
        format!("<body>{}{}", "<div>".repeat(100_000), "<p>deep text</p>").into_bytes(),
        format!("<p class=\"{}\">x</p>", "y".repeat(20 << 20)).into_bytes(),
    ] {
        let e = run_on_small_stack(html);
        assert!(e.error.is_empty());
    }
}

#[test]
fn a_panic_is_one_row_with_its_message() {
    let e = guarded(|| panic!("boom at {}", 7));
    assert!(e.error.contains("boom at 7") && e.text.is_empty(), "{e:?}");
    let e = guarded(|| std::panic::panic_any(42_u8));
    assert!(e.error.contains("panic without a message"));
    assert!(
        guarded(|| extract(b"<p>fine</p>", None, false, Options::default()))
            .error
            .is_empty()
    );
}
