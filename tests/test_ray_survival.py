"""The Ray engine survives its workers (issue 29.2): limiter slots are leases that a lost attempt gives back
(freed by the driver, or at their expiry), the calls a killed attempt made reach calls.jsonl and the spend, and
a worker killed mid-call under a rate limit with one slot never hangs the run. Local Ray and a scripted server
on 127.0.0.1; skipped where the ``ray`` extra is not installed."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")

from judge.llm.config import ModelConfig  # noqa: E402
from judge.llm.ray_limits import KILL_AT_LEASE_TEST_ENV, _actor_class, create_limit_actors, lease_seconds  # noqa: E402
from tests.conftest import run_cli  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True, _node_ip_address="127.0.0.1")
    yield
    ray.shutdown()


def _stats(actor) -> dict:
    return ray.get(actor.stats.remote())


def test_a_lost_owners_slots_are_freed_and_a_late_grant_to_it_too(local_ray):
    cfg = ModelConfig(model="openai/scripted", api_base="http://127.0.0.1:9/v1", max_concurrency=1)
    actor = next(iter(create_limit_actors([cfg]).values()))
    first = ray.get(actor.acquire.remote("batch-1-attempt-0"))
    assert first is not None and _stats(actor)["held"] == 1
    parked = actor.acquire.remote("batch-2-attempt-0")  # the only slot is taken: it waits in the actor
    assert not ray.wait([parked], timeout=0.5)[0]
    assert ray.get(actor.release_owner.remote("batch-1-attempt-0")) == 1  # its worker died holding the slot
    second = ray.get(parked, timeout=10)  # ... so the parked call gets it
    assert second is not None
    late = actor.acquire.remote("batch-3-attempt-0")  # parked, then its worker dies before it is granted
    ray.get(actor.release_owner.remote("batch-3-attempt-0"))
    ray.get(actor.finish.remote(second, "ok"))
    assert ray.get(late, timeout=10) is None  # granted to a dead owner: freed at once
    stats = _stats(actor)
    assert stats["in_flight"] == 0 and stats["held"] == 0 and stats["reclaimed"] == 2
    ray.get(actor.finish.remote(second, "ok"))  # a second end of the same lease frees nothing twice
    assert _stats(actor)["in_flight"] == 0


def test_a_lease_past_its_expiry_is_freed(local_ray):
    actor = _actor_class().options(max_concurrency=100).remote(1, None, None, 1.0)  # leases live 1 s
    lease = ray.get(actor.acquire.remote("gone-without-a-word"))
    assert lease is not None
    deadline = time.monotonic() + 15
    while _stats(actor)["in_flight"] and time.monotonic() < deadline:
        time.sleep(0.3)
    stats = _stats(actor)
    assert stats["in_flight"] == 0 and stats["expired"] == 1
    assert ray.get(actor.acquire.remote("next"), timeout=10) is not None  # the slot serves again


def test_a_lease_lives_as_long_as_the_port_lets_one_attempt_run():
    cfg = ModelConfig(model="openai/x", api_base="http://127.0.0.1:9/v1", timeout=20, validation_retries=1)
    assert lease_seconds(cfg) >= 20 * 2 + 10  # the port's hard limit on one attempt, never shorter


def _write_records(path: Path, n: int) -> None:
    lines = []
    for i in range(n):
        source = f"The bridge in town {i} was built in {1800 + i}. It is {10 + i} metres long. The council repaired it in 2001."
        answer = f"The bridge in town {i} was built in {1800 + i}. It is {20 + i} metres long."
        lines.append(json.dumps({"id": f"r{i:03d}", "question": "What about the bridge?", "source": source, "answer": answer}) + "\n")
    path.write_text("".join(lines), encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("cache", ["actor", "off"])
def test_a_worker_killed_holding_the_only_slot_never_hangs_the_run_and_every_call_is_counted(scripted_server, tmp_path, cache):
    """One slot cluster-wide (max_concurrency 1) under a rate limit; the worker granted the third lease dies
    holding it, after two calls of its first batch of four records (one judge call each). Before: the slot was never freed (the run hung for good) and
    the dead attempt's calls never reached calls.jsonl. Now: the run finishes, every record once, and the
    usage equals what the server saw, to the request and the token."""
    from judge.testing.scripts import pipeline_model

    server = scripted_server(pipeline_model(lambda cid, req: "supported"))
    records = tmp_path / "records.jsonl"
    _write_records(records, 10)
    config = {
        "name": "kill", "dataset": {"path": str(records)},
        "models": {"judge-b": {"model": "openai/judge-b", "api_base": server.base_url, "family": "fam-b", "timeout": 10,
                               "rpm": 1200, "max_concurrency": 1, "price": {"input_per_million": 1000, "output_per_million": 2000}}},
        "decompose": {"method": "sentences"},
        "adjudicate": {"judges": ["judge-b"], "batch_claims": True, "triage": False},
        "controls": {"enabled": False},
        "record_concurrency": 2,
        "ray": {"batch_size": 4, "cache": "actor"},
        "cache_dir": str(tmp_path / "cache"),
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    marker = tmp_path / "killed"
    started = time.monotonic()
    out = run_cli("run", str(path), "--engine", "ray", "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress",
                  *(["--no-cache"] if cache == "off" else []), env={KILL_AT_LEASE_TEST_ENV: f"{marker}:3"}, timeout=400)
    assert marker.exists(), out.stderr  # a worker did die, holding the only slot
    assert out.returncode in (0, 3), out.stderr
    summary = json.loads(out.stdout)
    assert summary["run"]["complete"] and summary["run"]["records_finished"] == 10, summary["run"]
    run_dir = Path(summary["run_dir"])
    ids = [json.loads(line)["record_id"] for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert ids == [f"r{i:03d}" for i in range(10)]  # every record once, in order
    calls = [json.loads(line) for line in (run_dir / "calls.jsonl").read_text(encoding="utf-8").splitlines()]
    made = [c for c in calls if not c["cached"]]
    stats = server.stats
    assert len(made) == stats.requests  # the dead attempt's two calls included
    assert sum(c["prompt_tokens"] for c in made) == stats.prompt_tokens
    assert sum(c["completion_tokens"] for c in made) == stats.completion_tokens
    assert summary["usage"]["calls"] == stats.requests and summary["usage"]["prompt_tokens"] == stats.prompt_tokens
    spent = (stats.prompt_tokens * 1000 + stats.completion_tokens * 2000) / 1e6  # the dead attempt's spend counts too
    assert summary["usage"]["cost_usd"] == pytest.approx(spent, rel=1e-9)
    assert stats.peak_concurrency == 1  # the one slot held across the workers
    log = (run_dir / "run.log").read_text(encoding="utf-8")
    assert "lost with its worker" in log and "1 resubmitted" in log
    if cache == "actor":  # the retry found the dead attempt's first finished call in the cache actor
        assert any(c["cached"] for c in calls)
    else:  # ten records' calls, and the dead attempt's two again
        assert stats.requests == 12
    assert time.monotonic() - started < 400


@pytest.mark.slow
def test_a_local_ray_listens_on_the_loopback_only(tmp_path):
    """judge's own local Ray (``connect(None)``), in a fresh process: its node and its GCS are 127.0.0.1, and the GCS
    listens on the loopback only (Ray turns 127.0.0.1 into the machine's address unless told otherwise)."""
    import subprocess
    import sys

    script = (
        "import json, ray\n"
        "from judge.raylib import connect\n"
        "connect(None)\n"
        "nodes = [n['NodeManagerAddress'] for n in ray.nodes()]\n"
        "gcs = ray.get_runtime_context().gcs_address\n"
        "port = int(gcs.rsplit(':', 1)[1])\n"
        "listening = []  # the addresses a socket listens on at the GCS port, from /proc/net/tcp and tcp6\n"
        "for table in ('/proc/net/tcp', '/proc/net/tcp6'):\n"
        "    for line in open(table).read().splitlines()[1:]:\n"
        "        local, state = line.split()[1], line.split()[3]\n"
        "        address, hexport = local.split(':')\n"
        "        if state == '0A' and int(hexport, 16) == port:\n"
        "            listening.append(address)\n"
        "ray.shutdown()\n"
        "print(json.dumps({'nodes': nodes, 'gcs': gcs, 'listening': listening}))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=Path(__file__).parents[1])
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["nodes"] == ["127.0.0.1"] and seen["gcs"].startswith("127.0.0.1:")
    loopback = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}  # 127.0.0.1, ::ffff:127.0.0.1, ::1
    assert seen["listening"] and set(seen["listening"]) <= loopback, seen["listening"]  # not 0.0.0.0, not the machine's address


def test_a_refused_token_is_said_as_such():
    """Ray's own words when a token-auth cluster refuses the client: the connection error says only "failed to
    connect"; its native log, which judge keeps back while it connects, says why (as Ray 2.60 writes it)."""
    from judge.raylib import _ray_problem

    log = ("[2026-12-01 18:22:02,045 W 23878 23878] gcs_client.cc:210: Failed to get cluster ID from GCS server: "
           "Unauthenticated: RPC error: InvalidAuthToken: Authentication token is missing or incorrect\n") * 3
    said = _ray_problem(ConnectionError("Failed to connect to Ray cluster at 10.0.0.2:6379"), "10.0.0.2:6379", log)
    assert said.startswith("the Ray cluster at 10.0.0.2:6379 refused this client") and "token" in said
    plain = _ray_problem(ConnectionError("Failed to connect to Ray cluster at 10.0.0.2:6379"), "10.0.0.2:6379", "")
    assert plain == "cannot reach the Ray cluster at 10.0.0.2:6379: Failed to connect to Ray cluster at 10.0.0.2:6379"
    mismatch = _ray_problem(RuntimeError("Version mismatch: The cluster was started with:\n Ray: 2.9.0\n Python: 3.10"), "h:1")
    assert "another Ray or Python version" in mismatch and "Ray: 2.9.0 Python: 3.10" in mismatch
