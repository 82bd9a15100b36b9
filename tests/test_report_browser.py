"""report.html in a real browser (headless Chromium from Debian's packages, driven by selenium):
no console errors, Hebrew blocks right-to-left, and a script planted in an answer never runs."""

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import BUNDLED_SAMPLE, run_cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
PLANTED = '<script>window.__pwned = 1;</script><img src="x" onerror="window.__pwned = 2">'


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
    rows = [{"record_id": r["id"], "model": "planted" if i == 0 else "m", "answer": r["reference_answer"] + (" " + PLANTED if i == 0 else "")}
            for i, r in enumerate(records)]
    answers.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows), encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(f"name: browser\ndataset: {{path: {BUNDLED_SAMPLE}}}\nanswers: {{path: {answers}}}\ndecompose: {{method: sentences}}\n"
                      f"adjudicate: {{judges: [deterministic]}}\ncache_dir: {tmp_path / 'cache'}\n")
    result = run_cli("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    report = Path(json.loads(result.stdout)["run_dir"]) / "report.html"
    html = report.read_text(encoding="utf-8")
    assert "<script" not in html.lower() and "&lt;script&gt;" in html
    driver = _driver()
    try:
        driver.get(report.as_uri())
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
