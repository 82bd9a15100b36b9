"""report.html in a real browser (headless Chromium from Debian's packages, driven by selenium):
no console errors, Hebrew blocks right-to-left, a script planted in an answer never runs while the page's own
script (admitted by its hash) does: a click on a claim outlines its spans and a click on a span goes back,
the filters hide claims, and a bidi override in a model name stays isolated."""

import base64
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import BUNDLED_SAMPLE, run_cli

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


def test_report_in_a_real_browser(tmp_path):
    answers = tmp_path / "answers.jsonl"
    records = json.loads(BUNDLED_SAMPLE.read_text(encoding="utf-8"))
    rows = [{"record_id": r["id"], "model": MODEL if i == 0 else "m", "answer": r["reference_answer"] + (" " + PLANTED if i == 0 else "")}
            for i, r in enumerate(records)]
    answers.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows), encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(f"name: browser\ndataset: {{path: {BUNDLED_SAMPLE}}}\nanswers: {{path: {answers}}}\ndecompose: {{method: sentences}}\n"
                      f"adjudicate: {{judges: [deterministic]}}\ncache_dir: {tmp_path / 'cache'}\n")
    result = run_cli("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    report = Path(json.loads(result.stdout)["run_dir"]) / "report.html"
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
