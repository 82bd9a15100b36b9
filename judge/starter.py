"""``judge init DIR``: a starter project that runs as soon as it is written, with no model and no key: a config
with the deterministic judge, a three-record plain JSONL example, the shipped models file and answer prompt.
Existing files are never overwritten.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from judge.files import UnsafePath, open_new
from judge.resources import shipped_dir

CONFIG_NAME = "judge.yaml"
DATA_NAME = "example.jsonl"
MODELS_NAME = "models.yaml"
PROMPT_NAME = "answer_v1.j2"

EXAMPLE = [
    {
        "id": "bridge-1",
        "question": "When did the Golden Gate Bridge open?",
        "source": "The Golden Gate Bridge opened to traffic on May 28, 1937. Its main span is 1,280 metres long.",
        "answer": "The bridge opened to traffic on May 28, 1937.",
    },
    {
        "id": "bridge-2",
        "question": "How long is the bridge's main span?",
        "source": "The Golden Gate Bridge opened to traffic on May 28, 1937. Its main span is 1,280 metres long.",
        "answer": "Its main span is 2,737 metres long. It is painted blue.",
    },
    {
        "id": "bees-1",
        "question": "What do honey bees make, and from what?",
        "source": "Honey bees make honey from the nectar of flowers. A colony can hold tens of thousands of bees.",
        "answer": "Honey bees make honey from the nectar of flowers.",
    },
]

CONFIG = f"""\
# A starter run: `judge run {CONFIG_NAME}`. No model and no key: the answers are recorded in the data,
# split into sentences, and ruled on by the deterministic judge (support-span search and checks).
# For a model judge, name one from {MODELS_NAME} in `judges:` (e.g. [claude-haiku, deterministic] with
# ANTHROPIC_API_KEY set); for answers written by a model under test, drop `answer` from the records and add
# `generate: {{models: [NAME]}}`.
name: starter
dataset:
  path: {DATA_NAME}   # plain JSONL: id, question, source (or sources), answer (or answers)
models_file: {MODELS_NAME}
# Regression-testing your own answer prompts (docs/regression.md): each model under test answers with each
# variant, and each answer is labelled MODEL+VARIANT; compare them with
# `judge compare RUN RUN --prompt-a v1 --prompt-b v2`, or pin a run (`judge baseline save RUN --name main`)
# and gate the next one on it (`judge run {CONFIG_NAME} --baseline main`).
# generate:
#   models: [gpt-4o-mini]
#   prompts:
#     v1: {PROMPT_NAME}          # the shipped answer prompt, to edit: variables question, sources, language
#     v2: {PROMPT_NAME}          # point this at your new prompt
# thresholds:                    # judge run exits 1 when a bound is broken (overall or by any model/variant)
#   max_hallucination_rate: 0.1
decompose:
  method: sentences
adjudicate:
  judges: [deterministic]
cache_dir: .cache/judge
"""


def write_starter(directory: str | Path) -> list[Path]:
    """Write the starter project into ``directory`` and return the files written; FileExistsError, naming the
    files, when any is already there."""
    target = Path(directory)
    files = {
        CONFIG_NAME: CONFIG,
        DATA_NAME: "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in EXAMPLE),
        MODELS_NAME: (shipped_dir("configs") / "models.yaml").read_text(encoding="utf-8"),
        PROMPT_NAME: (shipped_dir("prompts") / "answer.j2").read_text(encoding="utf-8"),  # a prompt variant to start from
    }
    existing = [str(target / name) for name in files if os.path.lexists(target / name)]  # a dangling link too
    if existing:
        raise FileExistsError(f"{', '.join(existing)} already exist(s); init writes only into new files")
    if target.is_symlink():
        raise UnsafePath(f"{target} is a symbolic link: judge init writes only into a real folder")
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = target / name
        with open_new(path) as f:  # O_EXCL|O_NOFOLLOW: a link planted since the check is refused, not followed
            f.write(text)
        written.append(path)
    return written
