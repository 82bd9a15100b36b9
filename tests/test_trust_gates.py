"""Issue 50, a second hostile pass: the inputs of the trust features (the confirmation's cache, floor and
records; label sheets; scores.json's corrected block; a run directory's own files) decide no gate unchecked.
Each reproduction through the command line."""

from __future__ import annotations

import json
import os
import shutil

import pytest
import yaml

from judge.starter import EXAMPLE
from tests.test_boundary import _jsonl, cli, one_line
from tests.test_io_doors import _config, finished  # noqa: F401 (finished: a module-scoped fixture, one finished run per module)


# -- class 10: a config's path fields -----------------------------------------------------------------------


@pytest.mark.parametrize("field", ["calibration", "cache_dir"])
def test_a_nul_in_a_config_path_field_is_one_line(tmp_path, field):
    data = _jsonl(tmp_path / "data.jsonl", EXAMPLE[:1])
    config = _config(tmp_path, data, **{field: "cal\0ibration.json"})
    one_line(cli("run", config, "--runs-dir", tmp_path / "runs", "--no-progress"), field, "NUL")
    assert not (tmp_path / "runs").exists()


def test_a_calibration_file_that_is_a_link_is_refused_before_any_call(tmp_path, finished):
    real = tmp_path / "real.json"
    real.write_text("{}", encoding="utf-8")
    os.symlink(real, tmp_path / "cal.json")
    data = _jsonl(tmp_path / "data.jsonl", EXAMPLE[:1])
    config = _config(tmp_path, data, calibration="cal.json")
    one_line(cli("run", config, "--runs-dir", tmp_path / "runs", "--no-progress"), "cal.json", "link")
