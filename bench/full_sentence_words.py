"""What "a few words" is (issue 45.1): of the claims closed by a full stop in the English, Portuguese and
Spanish rows of the labelled sets (bench/no_model_data.py's cache), the share that have a verb of their own
(judge.text.proposition.own_clause, with the lexicons), by word count. Where a language has no verb rules, a
closed sentence of FULL_SENTENCE_WORDS words or more is read as a claim of its own.

    python bench/full_sentence_words.py --cache /tmp/no-model-rows
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge.text.proposition import _WORD, own_clause  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, required=True)
    args = ap.parse_args()
    by: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for f in sorted(args.cache.glob("*.json")):
        for r in json.loads(f.read_text(encoding="utf-8"))["rows"]:
            t = r["text"].strip()
            if t and t[-1] in ".!" and r["language"] in ("en", "pt", "es"):
                k = min(len(_WORD.findall(t)), 12)
                by[k][0] += 1
                by[k][1] += own_clause(t)
    for k in sorted(by):
        print(f"{k}{'+' if k == 12 else ''} words: {by[k][1]}/{by[k][0]} own clause ({by[k][1] / by[k][0]:.2f})")


if __name__ == "__main__":
    main()
