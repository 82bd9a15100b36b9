"""Installable, not only editable: the wheel carries the prompts and configs (copies equal to the top-level
ones), and installed into a fresh venv outside the checkout it runs `judge init` + `judge run` and the pytest
plugin. The venv reuses the test interpreter's site-packages for the dependencies (a .pth line), so no
network is needed; the wheel itself is built from a copy of this checkout."""

import importlib.util
import json
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from judge import __version__
from judge.starter import CONFIG_NAME, EXAMPLE, write_starter
from tests.conftest import ROOT

SKIP_ANYWHERE = {".git", ".cache", ".venv", "__pycache__", ".pytest_cache"}
SKIP_AT_TOP = {"build", "runs", "bench", "docs"}


def _skip(directory: str, names: list[str]) -> list[str]:
    top = Path(directory) == ROOT
    return [n for n in names if n in SKIP_ANYWHERE or n.endswith(".egg-info") or (top and n in SKIP_AT_TOP)]


def _setuptools_builds_wheels() -> bool:
    try:
        from setuptools.command.bdist_wheel import bdist_wheel  # noqa: F401  (setuptools >= 70.1)
    except ImportError:
        return importlib.util.find_spec("wheel") is not None
    return True


def test_init_writes_a_starter_project_and_never_overwrites(tmp_path):
    written = write_starter(tmp_path / "proj")
    assert sorted(p.name for p in written) == ["answer_v1.j2", "example.jsonl", "judge.yaml", "models.yaml"]
    lines = [json.loads(line) for line in (tmp_path / "proj" / "example.jsonl").read_text().splitlines()]
    assert lines == EXAMPLE and len(lines) == 3
    assert all(set(r) == {"id", "question", "source", "answer"} for r in lines)
    assert all(isinstance(v, str) and v.strip() for r in lines for v in r.values())
    assert (tmp_path / "proj" / "models.yaml").read_text() == (ROOT / "configs" / "models.yaml").read_text()
    with pytest.raises(FileExistsError, match="judge.yaml"):
        write_starter(tmp_path / "proj")


@pytest.mark.slow
@pytest.mark.skipif(not _setuptools_builds_wheels(), reason="this interpreter's setuptools cannot build wheels (pip install 'setuptools>=70.1')")
def test_the_wheel_installed_outside_the_checkout_runs_init_run_and_the_pytest_plugin(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=_skip)
    dist = tmp_path / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(src)],
        capture_output=True, text=True, timeout=300,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = dist.glob("judge-*.whl")
    with zipfile.ZipFile(wheel) as z:
        for folder, inner, pattern in (("prompts", "_prompts", "*.j2"), ("configs", "_configs", "*.yaml")):
            top = sorted((ROOT / folder).glob(pattern))
            assert top
            for f in top:  # the packaged copy is the top-level file, byte for byte
                assert z.read(f"judge/{inner}/{f.name}") == f.read_bytes(), f"{inner}/{f.name} differs from {folder}/{f.name}"
        assert "judge/data/he_sample.json" in z.namelist()

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    py = env_dir / "bin" / "python"
    site = Path(subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], capture_output=True, text=True, check=True).stdout.strip())
    deps = [p for p in sys.path if p.endswith("site-packages")]
    (site / "zz_judge_test_deps.pth").write_text("\n".join(deps) + "\n")  # after the venv's own site-packages
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        capture_output=True, text=True, timeout=300,
    )
    assert install.returncode == 0, install.stderr

    work = tmp_path / "outside"  # no checkout here or above it
    work.mkdir()
    judge = str(env_dir / "bin" / "judge")

    def run(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
        return subprocess.run(args, capture_output=True, text=True, cwd=work, timeout=timeout)

    where = run(str(py), "-c", "import judge, judge.prompts as p; print(judge.__file__); print(p.PROMPTS_DIR)")
    module, prompts_dir = where.stdout.split()
    assert module.startswith(str(env_dir)) and prompts_dir.startswith(str(env_dir)) and prompts_dir.endswith("_prompts")
    assert run(judge, "--version").stdout.strip() == f"judge {__version__}"
    init = run(judge, "init", "proj")
    assert init.returncode == 0, init.stderr
    config = f"proj/{CONFIG_NAME}"
    result = run(judge, "run", config, "--runs-dir", "runs", "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["records"] == 3 and summary["overall"]["claims"] >= 3 and summary["overall"]["faithfulness"] is not None
    assert summary["overall"]["labels"]["judge_error"] == 0

    (work / "test_grounded.py").write_text(
        "def test_grounded(judge_grounding):\n"
        f"    run = judge_grounding.run('{config}')\n"
        "    judge_grounding.assert_grounded(run, max_judge_errors=0)\n"
    )
    plugin = run(str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_grounded.py")
    assert plugin.returncode == 0, plugin.stdout + plugin.stderr
    assert "1 passed" in plugin.stdout
