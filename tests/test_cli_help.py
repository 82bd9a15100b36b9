"""Smaller CLI items of issue 13.6: the main commands lead ``judge --help``; ``validate`` on an answers file
prints no empty rating rows."""

import re

from tests.conftest import BUNDLED_SAMPLE, ROOT, cli_inproc


def test_help_lists_the_main_commands_before_the_research_tools():
    out = cli_inproc("--help", env={"COLUMNS": "120"}).stdout
    names = re.findall(r"^│ ([a-z][a-z-]+)\s", out, flags=re.M)
    main = ["run", "score", "compare", "rejudge", "agreement", "validate"]
    assert names[: len(main)] == main
    research = [names.index(n) for n in ("align", "longcontext", "flashrag-eval")]
    assert min(research) > max(names.index(n) for n in main) and "Research tools" in out


def test_validate_an_answers_file_prints_no_empty_rating_rows():
    answers = cli_inproc("validate", str(ROOT / "judge" / "data" / "he_sample_answers.jsonl"), env={"COLUMNS": "120"})
    assert answers.returncode == 0, answers.stderr
    assert "answers_by_model" in answers.stdout and "alpha" not in answers.stdout and "perfect agreement" not in answers.stdout
    dataset = cli_inproc("validate", str(BUNDLED_SAMPLE), env={"COLUMNS": "120"})
    assert "alpha, ordinal, pooled" in dataset.stdout  # a file with human ratings keeps them
