"""report.html in a real browser (headless Chromium from Debian's packages, driven by selenium):
no console errors, Hebrew blocks right-to-left, a script planted in an answer never runs while the page's own
script (admitted by its hash) does: a click on a claim outlines its spans and a click on a span goes back,
the filters hide claims, and a bidi override in a model name stays isolated. The first 1400x2400 screen shows
claims with their labels, before any summary section (issue 40.4)."""

import base64
import hashlib
import json
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import BUNDLED_SAMPLE, ROOT, cli_inproc
from tests.test_report_lead import supported_everywhere  # noqa: F401 (a fixture: a run in which no claim is not grounded)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
PLANTED = '<script>window.__pwned = 1;</script><img src="x" onerror="window.__pwned = 2">'
MODEL = "planted\u202e<script>window.__pwned = 3;</script>"  # a right-to-left override and a script in a model name


def _driver():
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip("headless Chromium is not installed (apt-get install chromium chromium-driver; .ci/run does it)")
    pytest.importorskip("selenium", reason="selenium is not installed (pip install -e '.[test]')")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1200,1600"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def _run(tmp_path, name: str, rows: list[dict]) -> Path:
    """A run of the deterministic judge over the bundled sample with these answers; its directory."""
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows), encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(f"name: {name}\ndataset: {{path: {BUNDLED_SAMPLE}}}\nanswers: {{path: {answers}}}\ndecompose: {{method: sentences}}\n"
                      f"adjudicate: {{judges: [deterministic]}}\ncache_dir: {tmp_path / 'cache'}\n")
    result = cli_inproc("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    return Path(json.loads(result.stdout)["run_dir"])


@pytest.mark.slow
def test_report_in_a_real_browser(tmp_path):
    records = json.loads(BUNDLED_SAMPLE.read_text(encoding="utf-8"))
    rows = [{"record_id": r["id"], "model": MODEL if i == 0 else "m", "answer": r["reference_answer"] + (" " + PLANTED if i == 0 else "")}
            for i, r in enumerate(records)]
    report = _run(tmp_path, "browser", rows) / "report.html"
    html = report.read_text(encoding="utf-8")
    scripts = re.findall(r"<script>(.*?)</script>", html, flags=re.S)
    assert len(scripts) == 1 and html.lower().count("<script") == 1 and "&lt;script&gt;" in html
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in html  # the CSP admits exactly the page's own script
    driver = _driver()
    try:
        driver.get(report.as_uri())
        assert driver.execute_script("return window.__pwned === undefined")
        # a bidi override from the data never leaves its isolate (<bdi>, or an element with dir)
        loose = driver.execute_script(
            "var w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT), n, out = [];"
            "while ((n = w.nextNode())) { if (n.data.indexOf('\\u202e') >= 0 && !n.parentElement.closest('bdi, [dir]')) out.push(n.data); }"
            "return [out, document.body.innerText.indexOf('\\u202e') >= 0];"
        )
        assert loose == [[], True]
        # click a claim that cites evidence: its spans are outlined; click a span: back to the claim
        claim_id = driver.execute_script(
            "var m = document.querySelector('mark[data-c]'); return m.dataset.c.split(' ')[0];")
        claim = driver.find_element("id", claim_id)
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", claim)
        claim.find_element("css selector", "div").click()
        outlined = driver.execute_script(
            "return Array.from(document.querySelectorAll('mark.outlined')).map(m => [m.dataset.c, getComputedStyle(m).outlineStyle]);")
        assert outlined and all(claim_id in c.split() and style == "solid" for c, style in outlined)
        assert driver.execute_script("return document.getElementById(arguments[0]).classList.contains('outlined')", claim_id)
        driver.execute_script("document.querySelectorAll('.outlined').forEach(e => e.classList.remove('outlined'))")
        mark = driver.find_element("css selector", f"mark[data-c~='{claim_id}']")
        driver.execute_script("arguments[0].click()", mark)
        assert driver.execute_script("return document.getElementById(arguments[0]).classList.contains('outlined')", claim_id)
        # the evidence ids of the judges' table are written on the spans
        ids = driver.execute_script("return Array.from(document.querySelectorAll('sup.eid')).map(e => e.textContent)")
        assert ids and all(re.fullmatch(r"(a\d+:)?\d+\.\d+( (a\d+:)?\d+\.\d+)*", x) for x in ids)
        # filters: by label, by model, by judge disagreement (one judge: none)
        from selenium.webdriver.support.ui import Select

        visible = "return Array.from(document.querySelectorAll('.claim')).filter(e => e.offsetParent !== null).map(e => [e.dataset.label, e.dataset.model])"
        everything = driver.execute_script(visible)
        Select(driver.find_element("id", "f-label")).select_by_value("supported")
        shown = driver.execute_script(visible)
        assert 0 < len(shown) < len(everything) and {lbl for lbl, _ in shown} == {"supported"}
        Select(driver.find_element("id", "f-label")).select_by_value("")
        Select(driver.find_element("id", "f-model")).select_by_value(MODEL)
        shown = driver.execute_script(visible)
        assert shown and {m for _, m in shown} == {MODEL} and len(shown) < len(everything)
        Select(driver.find_element("id", "f-model")).select_by_value("")
        driver.find_element("id", "f-disagree").click()
        assert driver.execute_script(visible) == []
        driver.find_element("id", "f-disagree").click()
        assert len(driver.execute_script(visible)) == len(everything)
        assert driver.execute_script("return window.__pwned === undefined")
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == [], errors
        directions = driver.execute_script(
            "return Array.from(document.querySelectorAll('.source, .answer')).map(e => getComputedStyle(e).direction)"
        )
        assert directions and set(directions) == {"rtl"}
        text = driver.execute_script("return document.body.innerText")
        assert "window.__pwned = 1;" in text  # shown as text, not run
        assert driver.execute_script("return document.querySelectorAll('svg').length") >= 2
        shot = tmp_path / "report.png"
        driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000
    finally:
        driver.quit()


def test_label_a_sample_in_the_browser_then_score(tmp_path):
    """Labelling mode: start, label with keys and buttons, skip, go back, export; the exported sheet scores."""
    records = json.loads(BUNDLED_SAMPLE.read_text(encoding="utf-8"))
    rows = [{"record_id": r["id"], "model": m, "answer": r["reference_answer"] + (" " + PLANTED if m == "b" else "")}
            for r in records for m in ("a", "b")]
    run_dir = _run(tmp_path, "labelling", rows)
    made = cli_inproc("label", str(run_dir), "--n", "8", "--json")
    assert made.returncode == 0, made.stderr
    sheet = [json.loads(x) for x in (run_dir / "labels.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(sheet) == 8 and all(r["label"] == "" for r in sheet)
    report = run_dir / "report.html"
    html = report.read_text(encoding="utf-8")
    assert html.lower().count("<script") == 1  # the planted script in an answer is data: escaped in the items too
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    driver = _driver()
    try:
        driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
        driver.get(report.as_uri())
        progress = lambda: driver.find_element("id", "lb-progress").text  # noqa: E731
        assert progress() == "0 of 8 labelled"
        item = "return Array.from(document.querySelectorAll('#lb .lb-item')).findIndex(e => e.offsetParent !== null)"
        assert driver.execute_script(item) == 0
        # the first item: right to left (Hebrew), its offered span marked inside its context
        shown = driver.execute_script(
            "var e = document.querySelectorAll('#lb .lb-item')[0]; var row = JSON.parse(e.dataset.row);"
            "return [getComputedStyle(e.querySelector('.answer')).direction, Array.from(e.querySelectorAll('mark.lb-span')).map(m => m.textContent),"
            " row.passages.map(p => p.excerpt), row.item]")
        assert shown[0] == "rtl" and shown[1] == shown[2]
        from selenium.webdriver.common.action_chains import ActionChains

        keys = lambda k: ActionChains(driver).send_keys(k).perform()  # noqa: E731
        keys("1")  # before "start labelling" the keys do nothing
        assert progress() == "0 of 8 labelled"
        driver.find_element("id", "lb-start").click()
        keys("1")  # supported, and on to the next
        keys("3")  # unsupported
        keys("s")  # skip
        assert driver.execute_script(item) == 3 and progress() == "3 of 8 labelled"
        buttons = driver.execute_script("return Array.from(document.querySelectorAll('#lb .lb-item')[3].querySelectorAll('.lb-btn')).map(b => b.dataset.label)")
        assert buttons == ["supported", "partially_supported", "unsupported", "contradicted", "skip"]
        driver.execute_script("document.querySelectorAll('#lb .lb-item')[3].querySelector('.lb-btn[data-label=contradicted]').click()")
        keys("2")  # partially supported
        driver.find_element("id", "lb-prev").click()
        keys("4")  # relabel item 5: contradicted
        assert progress() == "5 of 8 labelled"
        for _ in range(3):
            keys("1")
        assert progress() == "8 of 8 labelled"
        driver.get(report.as_uri())  # the labels live in the browser: a reload keeps them
        assert progress() == "8 of 8 labelled"
        driver.find_element("id", "lb-export").click()
        for _ in range(50):
            files = list(downloads.glob("labels-*.jsonl"))
            if files:
                break
            time.sleep(0.1)
        assert files, "the export was not downloaded"
        exported = files[0].read_text(encoding="utf-8")
        assert exported == driver.find_element("id", "lb-out").get_attribute("value")
        assert driver.execute_script("return window.__pwned === undefined")
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == [], errors
    finally:
        driver.quit()
    lines = [json.loads(x) for x in exported.splitlines()]
    assert [x["item"] for x in lines] == [r["item"] for r in sheet]
    assert [x["label"] for x in lines] == ["supported", "unsupported", "skip", "contradicted", "contradicted", "supported", "supported", "supported"]
    scored = cli_inproc("score", str(run_dir), "--labels", str(files[0]), "--json")
    assert scored.returncode == 0, scored.stderr
    corrected = json.loads(scored.stdout)["corrected"]["levels"]["claim"]
    assert corrected["labelled"] == 7 and corrected["skipped"] == 1
    overall = corrected["models"]["all models"]["hallucination_rate"]
    assert overall["corrected"] is None and overall["more_needed"] == 3  # 7 labels: no interval yet (issue 47 item 2), never silent
    assert "too few labels for all models: 3 more" in scored.stderr


SCREEN = {"width": 1400, "height": 2400}  # the first screen the issue measured


def _first_screen(report: Path) -> dict:
    """What the first 1400x2400 screen of the page shows: the claim elements of the top lists entirely on it
    (label as data, label as shown, bottom edge), every claim element, and where the first summary heading starts."""
    driver = _driver()
    try:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**SCREEN, "deviceScaleFactor": 1, "mobile": False})
        driver.get(report.as_uri())
        return driver.execute_script(
            "var out = {size: [window.innerWidth, window.innerHeight], seen: [], all: 0};"
            "document.querySelectorAll('.ng, .top-claim').forEach(function (e) { out.all += 1;"
            "  var r = e.getBoundingClientRect(), l = e.querySelector('.label');"
            "  if (l && e.offsetParent !== null && r.top >= 0 && r.bottom <= window.innerHeight) out.seen.push([e.dataset.label, l.textContent, r.bottom]); });"
            "var heads = Array.from(document.querySelectorAll('h2')).filter(function (h) { return h.id !== 'not-grounded' && h.id !== 'first-claims'; });"
            "out.summary = heads.length ? heads[0].getBoundingClientRect().top : null; out.summary_title = heads.length ? heads[0].textContent : null;"
            "return out;")
    finally:
        driver.quit()


def _assert_claims_lead(screen: dict, least: int) -> None:
    assert screen["size"] == [SCREEN["width"], SCREEN["height"]], screen["size"]
    seen = screen["seen"]
    assert len(seen) >= min(least, screen["all"]) > 0, screen
    assert all(label == shown for label, shown, _ in seen), "each claim shows its own label"
    assert max(bottom for *_, bottom in seen) <= screen["summary"], f"claims before the summary ({screen['summary_title']})"


def test_not_grounded_claims_with_labels_on_the_first_screen(tmp_path):
    """The bundled recorded answers: the not-grounded claims, labelled, fill the first screen's top."""
    answers = ROOT / "judge" / "data" / "he_sample_answers.jsonl"
    rows = [json.loads(line) for line in answers.read_text(encoding="utf-8").splitlines()]
    screen = _first_screen(_run(tmp_path, "first-screen", rows) / "report.html")
    _assert_claims_lead(screen, least=8)
    from judge.verdicts import NOT_GROUNDED

    seen = {label for label, *_ in screen["seen"]}  # the Hebrew profile applies: a claim it cannot decide is unsure
    assert {"contradicted", "unsupported", "partially_supported"} <= seen <= set(NOT_GROUNDED), seen


def test_first_answers_claims_with_labels_on_the_first_screen_when_none_is_not_grounded(supported_everywhere):  # noqa: F811
    """The first hour's case: a judge that fails its controls and calls every claim supported. The page opens
    with its verdict line, then the first answers' claims with their labels, then the summary."""
    run_dir, _ = supported_everywhere
    screen = _first_screen(run_dir / "report.html")
    _assert_claims_lead(screen, least=13)
    assert {label for label, *_ in screen["seen"]} == {"supported"}


def _hebrew_not_grounded(tmp_path) -> tuple[Path, str]:
    """A Hebrew answer of two sentences, the second planted (not grounded): its report.html."""
    records = json.loads(BUNDLED_SAMPLE.read_text(encoding="utf-8"))
    r = records[0]
    first = r["reference_answer"].strip()
    rows = [{"record_id": r["id"], "model": "m", "answer": first + " " + PLANTED}]
    return _run(tmp_path, "hebrew-order", rows) / "report.html", first


def test_a_hebrew_answer_sits_in_one_right_to_left_isolate(tmp_path):
    """Issue 46.6: the "in its answer" line's pieces in one rtl isolate, so its sentences keep their order."""
    report, first = _hebrew_not_grounded(tmp_path)
    page = report.read_text(encoding="utf-8")
    lines = re.findall(r'<div class="in-answer"[^>]*>in its answer[^:]*: (<bdi class="answer" dir="(\w+)">.*?)</div>', page, flags=re.S)
    assert lines and all(d == "rtl" for _, d in lines), lines[:1]


@pytest.mark.slow
def test_a_hebrew_answers_sentences_read_in_order_in_a_real_browser(tmp_path):
    """Right to left, the answer's first sentence stands to the right of the next one on the line."""
    report, first = _hebrew_not_grounded(tmp_path)
    driver = _driver()
    try:
        driver.set_window_size(3000, 900)  # one line: the two sentences side by side
        driver.get(report.as_uri())
        xs = driver.execute_script(
            "var a = document.querySelector('.in-answer .answer'); var out = [];"
            "a.querySelectorAll(':scope > bdi, :scope > mark > bdi').forEach(function (b) {"
            "  var r = b.getBoundingClientRect(); out.push([b.textContent, r.left, r.top]); });"
            "return out;")
        assert len(xs) >= 2, xs
        (t1, x1, y1), (t2, x2, y2) = xs[0], xs[1]
        assert first.startswith(t1.strip()[:10]), xs
        # read right to left, in order: the first sentence to the right of the second on one line, or on a line above it
        assert (abs(y1 - y2) < 5 and x1 > x2) or y1 < y2 - 5, xs
    finally:
        driver.quit()
