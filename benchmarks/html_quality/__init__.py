"""Main-text quality of HTML extractors on the labelled pages of ``../shared/data`` (see bench_html_quality.py)."""
