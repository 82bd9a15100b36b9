"""The words a newcomer reads first (issue 46.5/46.7): the run's first line is a sentence with its full stop,
every term of a "why" line is in the glossary, and no text is cut mid-word (an embedded judge's rationale
stopped by its grammar's length cap, a long claim cut on the terminal)."""

from __future__ import annotations

import re

from judge.report.glossary import GLOSSARY
from tests.conftest import ROOT, cli_inproc

# the terms of the no-model judge's and the rule's reasons that are no plain English
TERMS = ("no-model judge", "fitted score", "span", "passage", "evidence", "checks", "free verdict", "triage")


def test_the_first_line_is_a_sentence_and_every_why_term_is_in_the_glossary(tmp_path):
    result = cli_inproc("run", str(ROOT / "configs" / "deterministic.yaml"), "--runs-dir", str(tmp_path / "runs"), "--no-progress",
                        env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    first = result.stdout.splitlines()[0]
    assert first.endswith("."), first
    whys = [line.split("why: ", 1)[1] for line in result.stdout.splitlines() if "why: " in line]
    assert whys, result.stdout[:3000]
    glossed = " ".join(GLOSSARY)
    for why in whys:
        assert "learned judge" not in why, why
        for term in TERMS:
            if re.search(rf"\b{re.escape(term)}", why):
                assert term in glossed, (term, why)
    assert any("fitted score" in w for w in whys), whys


def test_an_embedded_judges_capped_rationale_ends_on_a_whole_word():
    from judge.judges.model import whole_words
    from judge.llm.grammar import EMBEDDED_RATIONALE_CHARS as CAP

    cut = "The source says about 1,100 maths teachers are missing in the sch"[:CAP]
    assert len(cut) == CAP
    got = whole_words(cut, CAP)
    assert got.endswith("…") and got[:-1] == "The source says about 1,100 maths teachers are missing in the"
    assert whole_words("The source states it.", CAP) == "The source states it."  # short: as written
    full = ("x " * CAP)[: CAP - 1] + "."
    assert whole_words(full, CAP) == full  # a capped one that ends its sentence is whole
    assert whole_words(cut, None) == cut  # a hosted judge's rationale is never capped, never touched
    hebrew = ("המקור אומר שחסרים כ־1,100 מורים למתמטיקה בבתי הספר התיכוניים בכל הארץ")[:CAP]
    got = whole_words(hebrew, CAP)
    assert got.endswith("…") and hebrew.startswith(got[:-1]) and hebrew[len(got) - 1] == " "


def test_a_long_text_on_the_terminal_is_cut_between_words():
    from judge.report.console import data

    text = "Alice founded the club " + " ".join(f"and met member {w}" for w in ("alpha", "beta", "gamma", "delta") * 50) + "."
    shown = data(text)
    kept, rest = shown.split("… (", 1)
    assert text.startswith(kept) and text[len(kept)] == " ", kept[-20:]
    assert rest == f"{len(text) - len(kept):,} more characters)"
