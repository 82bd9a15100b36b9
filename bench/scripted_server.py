"""The scripted server in a process of its own, as a provider would be (bench/llm_bench.py): one fixed
structured answer with a fixed latency; prints its base URL, serves until stdin closes."""

from __future__ import annotations

import argparse
import json
import sys

from judge.testing.server import Reply, ScriptedServer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--body", default='{"label": "supported", "evidence": ["c1"], "rationale": "stated in c1"}')
    args = ap.parse_args()
    body = json.loads(args.body)
    server = ScriptedServer(lambda req, n: Reply(body=body, latency=args.latency), keep_bodies=False).start()
    sys.stdout.write(server.base_url + "\n")
    sys.stdout.flush()
    try:
        sys.stdin.read()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
