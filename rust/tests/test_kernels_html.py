# ruff: noqa: RUF001 - real sentences in Cyrillic, Greek and CJK scripts are the point of these tests
"""``html_extract``: charset decoding on pages encoded by Python's codecs, layouts, hostile input, real pages."""

import gzip
import json
import re
import threading
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from kernel_layouts import variants

import mdf_kernels as mk

AEB = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "aeb"

# Real sentences in each script, long enough to be the page's main text (>= 25 characters a paragraph).
TEXTS = {
    "fr": "Le conseil municipal a voté mercredi soir le budget de l'année prochaine, après un débat animé sur "
    "la rénovation des écoles, la piscine et le prix des cantines, que l'opposition juge trop élevé.",
    "cs": "Městská rada ve středu večer schválila rozpočet na příští rok. Nejvíce peněz půjde na opravy škol, "
    "koupaliště a silnic, přičemž opozice kritizovala vysoké ceny obědů ve školních jídelnách.",
    "ru": "Городской совет в среду вечером утвердил бюджет на следующий год. Больше всего денег пойдёт на "
    "ремонт школ, бассейна и дорог, а оппозиция раскритиковала высокие цены на обеды в столовых.",
    "el": "Το δημοτικό συμβούλιο ενέκρινε την Τετάρτη το βράδυ τον προϋπολογισμό του επόμενου έτους, μετά "
    "από έντονη συζήτηση για την ανακαίνιση των σχολείων, την πισίνα και τις τιμές των γευμάτων.",
    "ja": "市議会は水曜日の夜、来年度の予算案を可決した。学校の改修、プール、道路の補修に最も多くの予算が"
    "充てられ、野党は給食の値段が高すぎると批判した。審議は深夜まで続き、市長は記者会見で説明した。",
    "zh": "市议会星期三晚上通过了明年的预算，在学校翻修、游泳池和学校食堂价格等问题上进行了激烈的辩论，"
    "反对派认为食堂的价格太高。会议一直持续到深夜，市长随后在记者会上作了说明。",
}
# (language, Python codec, the label a page would declare)
ENCODINGS = [
    ("fr", "cp1252", "windows-1252"),
    ("cs", "iso8859_2", "iso-8859-2"),
    ("ru", "iso8859_5", "iso-8859-5"),
    ("ru", "cp1251", "windows-1251"),
    ("el", "iso8859_7", "iso-8859-7"),
    ("ja", "shift_jis", "shift_jis"),
    ("zh", "gb18030", "gb18030"),
]


def page(text: str, head: str = "") -> str:
    paras = "".join(f"<p>{s.strip()}</p>" for s in re.split(r"(?<=[.。])\s*", text) if s.strip())
    return f"<html><head>{head}<title>Budget</title></head><body><article>{paras}</article></body></html>"


def extract(pages, **kw) -> list:
    return mk.html_extract(pa.array(pages, pa.binary()), **kw).field("text").to_pylist()


def squash(s: str) -> str:
    return re.sub(r"\s+", "", s)


@pytest.mark.parametrize(("lang", "codec", "label"), ENCODINGS)
def test_declared_charsets(lang, codec, label):
    text = TEXTS[lang]
    meta = page(text, f'<meta charset="{label}">').encode(codec)
    pragma = page(text, f'<meta http-equiv="Content-Type" content="text/html; charset={label}">').encode(codec)
    bare = page(text).encode(codec)
    out = mk.html_extract(
        pa.array([meta, pragma, bare], pa.binary()), pa.array([None, None, label]), with_metadata=True
    )
    for got in out.field("text").to_pylist():
        assert squash(got) == squash(text)
    assert out.field("encoding").to_pylist()[0].lower() == label.replace("shift_jis", "shift_jis").lower()


@pytest.mark.parametrize(("lang", "codec", "label"), ENCODINGS)
def test_undeclared_charsets_are_detected(lang, codec, label):
    text = TEXTS[lang]
    assert squash(extract([page(text).encode(codec)])[0]) == squash(text)


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-8"])
def test_byte_order_mark_wins(codec):
    bom = {"utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff", "utf-8": b"\xef\xbb\xbf"}[codec]
    raw = bom + page(TEXTS["ja"], '<meta charset="iso-8859-1">').encode(codec)
    # the BOM beats both the (wrong) HTTP charset and the (wrong) meta
    assert squash(extract([raw], charsets=pa.array(["windows-1252"]))[0]) == squash(TEXTS["ja"])


def test_http_charset_beats_meta():
    raw = page(TEXTS["ru"], '<meta charset="iso-8859-1">').encode("cp1251")
    assert squash(extract([raw], charsets=pa.array(["windows-1251"]))[0]) == squash(TEXTS["ru"])
    assert squash(extract([raw])[0]) != squash(TEXTS["ru"])  # the meta is obeyed without an HTTP charset


def test_string_column_is_not_decoded_again(layout):
    pages = [page(TEXTS["fr"], '<meta charset="iso-8859-2">'), None, "", page(TEXTS["el"])]
    out = mk.html_extract(variants(pages)[layout], with_metadata=True)
    texts = out.field("text").to_pylist()
    assert squash(texts[0]) == squash(TEXTS["fr"])
    assert texts[1] is None and out.is_null().to_pylist() == [False, True, False, False]
    assert texts[2] == ""
    assert squash(texts[3]) == squash(TEXTS["el"])
    assert out.field("title").to_pylist() == ["Budget", None, "", "Budget"]
    assert out.field("encoding").to_pylist()[0] == "UTF-8"


def test_argument_errors():
    with pytest.raises(TypeError, match="pages must be a pyarrow Array"):
        mk.html_extract(["<p>x</p>"])
    with pytest.raises(TypeError, match="expected a string"):
        mk.html_extract(pa.array([1, 2]))
    with pytest.raises(ValueError, match="charsets has 2 rows but pages has 1"):
        mk.html_extract(pa.array(["x"]), pa.array(["a", "b"]))
    with pytest.raises(ValueError, match="max_bytes"):
        mk.html_extract(pa.array(["x"]), max_bytes=0)
    with pytest.raises(ValueError, match="favor='most' is not a mode; use 'precision', 'balanced' or 'recall'"):
        mk.html_extract(pa.array(["x"]), favor="most")
    # a page without a block of 25 characters: empty text, except under recall (its short body, issue 26)
    for favor, text in (("precision", ""), ("balanced", ""), ("recall", "x")):
        assert mk.html_extract(pa.array(["<p>x</p>"]), favor=favor).field("text").to_pylist() == [text]


def test_hostile_pages_give_text_or_empty():
    deep = "<div>" * 100_000 + "<p>" + TEXTS["fr"] + "</p>" + "</div>" * 100_000
    big = page(TEXTS["fr"] * 20_000)  # ~4 MB of one paragraph
    junk = bytes(range(256)) * 4000
    pages = [deep.encode(), big.encode(), junk, b"", b"<html><body></body></html>", b"<<<>>></></p>&&&;"]
    texts = extract(pages)
    assert squash(TEXTS["fr"]) in squash(texts[0])
    assert len(texts[1]) > 3_000_000
    assert all(isinstance(t, str) for t in texts)
    assert texts[3] == "" and texts[4] == ""


def other_thread_share(call) -> tuple[float, float]:
    """Run ``call()`` while another Python thread ticks; return (seconds ``call`` took, share of its 20 ms slices
    in which the other thread ran Python code at least once).

    Only ticks stamped strictly inside the call count. A call that holds the GIL lets the other thread run only
    around its edges (one GIL switch interval, 5 ms, at each end), so at most two or three slices; a call that
    releases the GIL leaves the other thread scheduled in most slices, also with the kernel's threads on every
    core (the OS gives each runnable thread a turn within its ~24 ms scheduling period)."""
    stamps: list[float] = []
    stop = threading.Event()
    started = threading.Event()

    def tick():
        started.set()
        while not stop.is_set():
            stamps.append(time.perf_counter())

    t = threading.Thread(target=tick)
    t.start()
    started.wait()
    t0 = time.perf_counter()
    call()
    t1 = time.perf_counter()
    stop.set()
    t.join()
    slices = max(1, int((t1 - t0) / SLICE))
    hit = {int((s - t0) / SLICE) for s in stamps if t0 < s < t1}
    return t1 - t0, len(hit & set(range(slices))) / slices


SLICE = 0.020


def fastest(call, times: int = 5) -> float:
    """The fastest of ``times`` timings of ``call``: a preemption on a loaded machine only ever adds time, so the
    minimum is the estimate of the unloaded speed (one timing of ~10 ms came out 30-177 ms here, sizing the
    measured call too small to measure: the test failed about 1 run in 9)."""
    best = float("inf")
    for _ in range(times):
        t = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - t)
    return max(best, 1e-6)


def gil_holding_stand_in(seconds: float):
    """A C call that holds the GIL for about ``seconds``: ``sum`` over a ``range`` never returns to the eval loop."""
    n = int(1_000_000 * seconds / fastest(lambda: sum(range(1_000_000))))
    return lambda: sum(range(n))


def test_releases_the_gil():
    """While ``html_extract`` runs, another Python thread runs too: in most 20 ms slices of the call.

    The old test counted the other thread's ticks over the whole run against 100 and could not fail: with the
    kernel swapped for a C call holding the GIL for 0.8 s, it still saw 140-158 K ticks (all before and after
    the call). Fails on a GIL-holding call of the same length (``test_the_gil_check_can_fail`` keeps that shown),
    and failed on this kernel built with its ``py.detach`` removed from ``py_arrow::run``: seen. The kernel's own
    threads and other work share the cores with the ticking thread, so a loaded machine can starve it in one
    measurement (seen once in 29: 41 %); the best of three is taken, which a GIL-holding call (0-12 %) never
    reaches."""
    one = page(TEXTS["cs"] * 200)
    batch = pa.array([one] * 50)
    per_page = fastest(lambda: mk.html_extract(batch), 3) / 50
    arr = pa.array([one] * max(800, int(0.6 / per_page)))  # ~0.6 s of work whatever the machine's speed
    tries = [other_thread_share(lambda: mk.html_extract(arr)) for _ in range(3)]
    assert max(seconds for seconds, _ in tries) > 10 * SLICE, f"the kernel ran {tries}: too short to measure"
    seconds, share = max(tries, key=lambda t: t[1])
    assert share >= 0.5, f"the other thread ran in {share:.0%} of the kernel's {seconds:.2f} s (best of {tries})"


def test_the_gil_check_can_fail():
    """The measurement above on a call that holds the GIL as long as the kernel takes: it must see it, in each
    of three tries (the best of three is what the test above accepts)."""
    arr = pa.array([page(TEXTS["cs"] * 200)] * 800)
    stand_in = gil_holding_stand_in(max(fastest(lambda: mk.html_extract(arr), 2), 0.5))
    for _ in range(3):
        seconds, share = other_thread_share(stand_in)
        assert seconds > 10 * SLICE, f"the stand-in ran {seconds:.3f} s: too short to measure"
        assert share < 0.5, f"a GIL-holding call let the other thread run in {share:.0%} of {seconds:.2f} s"


def tokens(s: str) -> Counter:
    return Counter(re.findall(r"\w+", s))


def f1(pred: str, gold: str) -> float:
    p, g = tokens(pred), tokens(gold)
    common = sum((p & g).values())
    return 0.0 if not common else 2 * common / (sum(p.values()) + sum(g.values()))


@pytest.mark.skipif(not (AEB / "ground-truth.json").exists(), reason=f"labelled pages not at {AEB} (shared data)")
def test_real_article_pages():
    """Raw bytes of the 181 labelled pages (our own charset decoding): mean token F1 well above all-text."""
    truth = json.loads((AEB / "ground-truth.json").read_text(encoding="utf-8"))
    ids = sorted(truth)
    raw = [gzip.decompress((AEB / "html" / f"{i}.html.gz").read_bytes()) for i in ids]
    out = mk.html_extract(pa.array(raw, pa.binary()), with_metadata=True)
    scores = [f1(t, truth[i]["articleBody"]) for i, t in zip(ids, out.field("text").to_pylist(), strict=True)]
    assert sum(scores) / len(scores) > 0.93
    assert sum(s < 0.5 for s in scores) <= 5
    assert all(out.field("title").to_pylist())


def test_block_model_argument():
    """``model`` sets a block model (none by default: the rules): a bad file is a ValueError naming its line, a valid
    one is used, and ``html_block_model()`` is the shipped one."""
    names = mk.html_block_features()
    page_html = page(TEXTS["fr"]) + "<footer><p>Mentions légales, contact et plan du site de la rédaction</p></footer>"
    with pytest.raises(ValueError, match="line 1: not an mdf block model"):
        mk.html_extract(pa.array([page_html]), model=b"hello")
    stale = f"mdf-html-blocks 1\nfeatures 2 {names[0]} other\nthresholds 0.5 0.5 0.5\nbase 0\n".encode()
    with pytest.raises(ValueError, match="line 2: its features are not this kernel's"):
        mk.html_extract(pa.array([page_html]), model=stale)
    header = f"mdf-html-blocks 1\nfeatures {len(names)} {' '.join(names)}\nthresholds 0.5 0.5 0.5\n"
    keep_all = (header + "base 5\n").encode()  # no trees: every block scores sigmoid(5)
    text = mk.html_extract(pa.array([page_html]), model=keep_all).field("text")[0].as_py()
    assert "Mentions légales" in text and squash(TEXTS["fr"]) in squash(text)
    keep_none = (header + "base -5\n").encode()
    assert mk.html_extract(pa.array([page_html]), model=keep_none).field("text").to_pylist() == [""]
    shipped = mk.html_extract(pa.array([page_html]), model=mk.html_block_model()).field("text")[0].as_py()
    assert squash(TEXTS["fr"]) in squash(shipped)


def test_html_blocks_rows_and_features():
    """One row per text block of each page, in order, with every feature; a null page has none."""
    out = mk.html_blocks(pa.array([page(TEXTS["fr"]), None, "<p>un</p><p>deux</p>"]))
    assert out.field("page").to_pylist()[-2:] == [2, 2]
    assert out.field("text").to_pylist()[-2:] == ["un", "deux"]
    assert 1 not in out.field("page").to_pylist()
    assert out.type.field("features").type.list_size == len(mk.html_block_features())
