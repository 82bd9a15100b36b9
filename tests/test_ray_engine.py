"""The Ray engine: a cluster-wide limit per model. Skipped where the ``ray`` extra is not installed."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")

from judge.llm.config import ModelConfig  # noqa: E402
import yaml  # noqa: E402

from judge.llm.ray_limits import create_limit_actors, limiter_factory  # noqa: E402
from tests.conftest import BUNDLED_SAMPLE, ROOT, run_cli  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True, _node_ip_address="127.0.0.1")
    yield
    ray.shutdown()


@ray.remote
def _worker(actors, cfg, n):
    async def go():
        limiter = limiter_factory(actors)(cfg)
        stamps = []

        async def one():
            await limiter.acquire(0)
            stamps.append(time.monotonic())
            await asyncio.sleep(0.2)
            await limiter.release()

        await asyncio.gather(*[one() for _ in range(n)])
        return stamps

    return asyncio.run(go())


@pytest.mark.slow
def test_concurrency_and_rate_hold_across_workers(local_ray):
    cfg = ModelConfig(model="openai/scripted", api_base="http://127.0.0.1:9/v1", rpm=600, max_concurrency=2)
    actors = create_limit_actors([cfg, cfg])
    assert len(actors) == 1  # one actor per model endpoint
    stamps = sorted(s for out in ray.get([_worker.remote(actors, cfg, 6) for _ in range(4)]) for s in out)
    # 24 starts at 600 rpm are at least 0.1 s apart: 2.3 s; two at a time for 0.2 s each: 2.2 s.
    assert stamps[-1] - stamps[0] >= 23 * 0.1 - 0.05
    stats = ray.get(next(iter(actors.values())).stats.remote())
    assert stats["peak"] == 2 and stats["started"] == 24


PINNED = Path(__file__).parent / "fixtures" / "pinned"


def _results(run_cli_result) -> str:
    assert run_cli_result.returncode == 0, run_cli_result.stderr
    return (Path(json.loads(run_cli_result.stdout)["run_dir"]) / "results.jsonl").read_text(encoding="utf-8")


@pytest.mark.slow
def test_ray_engine_gives_the_local_engines_results_deterministic(tmp_path):
    """The bundled deterministic config on a local Ray: byte for byte the pinned local results."""
    out = run_cli("run", str(ROOT / "configs" / "deterministic.yaml"), "--engine", "ray", "--runs-dir", str(tmp_path), "--json", "--no-progress")
    assert _results(out) == (PINNED / "deterministic" / "results.jsonl").read_text(encoding="utf-8")


@pytest.mark.slow
def test_ray_engine_gives_the_local_engines_results_scripted_panel(scripted_server, tmp_path):
    """Two model judges through the scripted server, batched on Ray workers whose ports share the limiter
    actor: the same results.jsonl as the local engine, and every call in the driver's calls.jsonl."""
    from judge.testing.scripts import claim_text, pipeline_model

    server = scripted_server(pipeline_model(lambda cid, req: "contradicted" if "5" in claim_text(req, cid) else "supported"))
    model = lambda name, fam: {"model": f"openai/{name}", "api_base": server.base_url, "family": fam, "timeout": 5, "rpm": 6000}  # noqa: E731
    config = {
        "name": "raypanel", "dataset": {"path": str(BUNDLED_SAMPLE)},
        "answers": {"path": str(ROOT / "judge" / "data" / "he_sample_answers.jsonl")},
        "models": {"judge-b": model("judge-b", "fam-b"), "judge-c": model("judge-c", "fam-c")},
        "decompose": {"method": "sentences"},
        "adjudicate": {"judges": ["judge-b", "judge-c", "deterministic"], "batch_claims": True, "triage": True},
        "ray": {"batch_size": 2},
        "controls": {"gate": False},  # judges that call everything supported fail their controls (exit 3): not what this compares
    }
    outs = {}
    for engine in ("local", "ray"):
        path = tmp_path / f"{engine}.yaml"
        path.write_text(yaml.safe_dump({**config, "cache_dir": str(tmp_path / f"cache-{engine}")}), encoding="utf-8")
        result = run_cli("run", str(path), "--engine", engine, "--runs-dir", str(tmp_path / engine), "--json", "--no-progress")
        outs[engine] = _results(result)
        run_dir = Path(json.loads(result.stdout)["run_dir"])
        calls = [json.loads(line) for line in (run_dir / "calls.jsonl").read_text(encoding="utf-8").splitlines()]
        assert calls and all(c["model"] for c in calls)
    assert outs["ray"] == outs["local"]


def test_ray_engine_refused_before_any_record_when_the_cluster_is_unreachable(tmp_path):
    out = run_cli("run", str(ROOT / "configs" / "deterministic.yaml"), "--engine", "ray", "--ray-address", "127.0.0.1:9",
                  "--runs-dir", str(tmp_path), "--no-progress")
    assert out.returncode == 2 and "Ray cluster at 127.0.0.1:9" in out.stderr and "Traceback" not in out.stderr
    assert not any(tmp_path.iterdir())  # no run directory was made


@pytest.mark.slow
def test_a_worker_killed_mid_batch_is_retried_and_every_record_appears_once(tmp_path):
    marker = tmp_path / "killed"
    env = {"JUDGE_RAY_KILL_ONCE": str(marker)}
    out = run_cli("run", str(ROOT / "configs" / "deterministic.yaml"), "--engine", "ray", "--runs-dir", str(tmp_path / "runs"),
                  "--json", "--no-progress", env=env)
    assert marker.exists()  # a worker did die
    assert _results(out) == (PINNED / "deterministic" / "results.jsonl").read_text(encoding="utf-8")


def _align_rows():
    from tests.test_flashrag import RIVER, hotpot, musique

    alpha = ["Alpha Town is a town in Norland.", "It was founded in 1820 by settlers from the coast.",
             "The bridge of Alpha Town was constructed in 1901 and rebuilt in 1950 after a flood destroyed it."]
    medi = {"Méditerranée (1963 film)": ["Méditerranée is a French film directed in 1963 by Jean-Daniel Pollet about the sea."]}
    return [
        hotpot("h1", [("Alpha Town", 1), ("Alpha Town", 2), ("Méditerranée (1963 film)", 0)], {"Alpha Town": alpha, **medi}),
        hotpot("h2", [("Zeta Mountain", 0)], {"Zeta Mountain": ["Zeta Mountain is tall."]}),
        hotpot("h3", [("Alpha Town", 0)], {"Alpha Town": ["Completely unrelated words about cooking pasta at home tonight."]}),
        hotpot("h4", [("Alpha Town", 7)], {"Alpha Town": alpha}),
        hotpot("h5", [("Alpha Town", 0)], {"Alpha Town": ["   "]}),
        hotpot("h6", [], {}),
        musique("m-ok", [("Beta River", RIVER), ("Gamma Port", "Gamma Port is a harbour town at the mouth of the Beta River.")]),
        musique("m-half", [("Beta River", RIVER), ("Gamma Port", "A poem about the moon and the stars over the quiet hills.")]),
        hotpot("h-fallback-dropped", [("Méditerranée (1963 film)", 0), ("Nowhere", 0)], {**medi, "Nowhere": ["x y z"]}),
    ] + [hotpot(f"f{i}", [(f"Filler {i}", 0)], {f"Filler {i}": [f"Filler text number {i} about nothing in particular."]}) for i in range(6, 40)]


@pytest.mark.slow
def test_align_on_ray_data_equals_the_local_align(tmp_path):
    """Rows split by title hash over 3 shards, each shard's task holding its share of the title index: the
    same kept rows, in the same order, and the same report (drops, reasons, branches, fallbacks)."""
    from tests.test_flashrag import CHUNKS

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in CHUNKS), encoding="utf-8")
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _align_rows()), encoding="utf-8")
    out = {}
    for engine in ("local", "ray"):
        extra = ("--engine", "ray", "--workers", "3") if engine == "ray" else ()
        result = run_cli("align", str(data), str(corpus), "--out", str(tmp_path / f"{engine}.jsonl"),
                         "--report", str(tmp_path / f"{engine}.report.json"), "--json", *extra)
        assert result.returncode == 0, result.stderr
        report = json.loads((tmp_path / f"{engine}.report.json").read_text())
        out[engine] = ((tmp_path / f"{engine}.jsonl").read_text(encoding="utf-8"), {k: v for k, v in report.items() if k not in ("out", "report")})
    assert out["ray"] == out["local"]
    _, report = out["local"]
    assert report["kept"] == 36 and report["suffix_fallbacks"] == 1 and len(report["dropped_rows"]) == 7  # the fixture covers kept, dropped and fallback rows


@pytest.mark.slow
def test_align_on_ray_refuses_duplicate_ids_as_the_local_align_does(tmp_path):
    """Duplicate chunk ids are checked by id shard on the workers; the error is the local one."""
    from tests.test_flashrag import CHUNKS

    chunks = CHUNKS + [{"id": "7", "contents": '"Alpha Town"\nA second text under an old id.'}, {"id": "30", "title": "Beta River", "text": "x"}]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in chunks), encoding="utf-8")
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _align_rows()[:3]), encoding="utf-8")
    errors = []
    for extra in ((), ("--engine", "ray", "--workers", "3")):
        result = run_cli("align", str(data), str(corpus), "--out", str(tmp_path / "out.jsonl"), *extra)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        errors.append([line for line in result.stderr.splitlines() if str(corpus) in line])
    assert errors[0] == errors[1] and len(errors[0]) == 2
    errors = ["\n".join(e) for e in errors]
    assert errors[0] == errors[1] and "duplicated chunk id" in errors[0] and "record 30" in errors[0] and "record 7" in errors[0]
    assert not (tmp_path / "out.jsonl").exists()
