"""The CI recipe of docs/ci.md played end to end against scripted models (issue 39), its commands run in process
in the workflow's order. The writer answers with its source's first sentence; ``REWORD`` in the system prompt
rewords it, ``BREAK`` makes three answers state a wrong year, ``BREAK1`` one.
"""

from __future__ import annotations

import html
import re
import shutil
from contextlib import chdir
from pathlib import Path

import yaml

from judge.testing.judges import judge_script
from judge.testing.scripts import user_text
from judge.testing.server import Reply, ScriptedServer, schema_of

BROKEN = ("opera", "station", "zoo")  # the three answers a breaking prompt makes wrong
BROKEN_ONE = ("zoo",)  # the one a single-error prompt makes wrong
WRONG = "It opened in 1952."
PROMPTS = {  # pull request -> the line it writes into the answer prompt's system block
    "unchanged": None,
    "reworded": "REWORD: say it in your own words, keeping every fact.",
    "broken": "BREAK: answer confidently, from memory if you must.",
    "one error": "BREAK1: answer confidently, from memory if you must.",
}


def writer(request: dict) -> Reply:
    system = " ".join(m.get("content") or "" for m in request["messages"] if m["role"] == "system")
    source = html.unescape(re.search(r"<source id=\"([^\"]*)\">(.*?)</source>", user_text(request), re.S).group(2)).strip()
    rid = re.search(r"<source id=\"([^\"]*)\">", user_text(request)).group(1)
    first = source.split(". ")[0].rstrip(".") + "."
    m = re.match(r"(.*) opened in (\d{4})", first)
    if "BREAK1" in system:
        if rid.startswith(BROKEN_ONE):
            return Reply(body={"answer": WRONG})
    elif "BREAK" in system and rid.startswith(BROKEN):
        return Reply(body={"answer": WRONG})
    if "REWORD" in system and m:
        return Reply(body={"answer": f"{m.group(1)} first opened its doors in {m.group(2)}."})
    return Reply(body={"answer": first})


def script(judge: str = "good", noise: float = 0.0):
    judging = judge_script(judge, noise)

    def reply(request: dict, n: int) -> Reply:
        props = (schema_of(request) or {}).get("properties", {})
        return writer(request) if "answer" in props else judging(request, n)

    return reply


class Recipe:
    """A fresh copy of docs/ci in ``root`` whose models are the scripted server's."""

    def __init__(self, root: Path, server: ScriptedServer, docs_ci: Path):
        self.root = root
        shutil.copytree(docs_ci, root, dirs_exist_ok=True)
        models = {"models": {name: {"model": f"openai/{name}", "api_base": server.base_url, "family": fam, "timeout": 10}
                             for name, fam in (("writer", "fam-w"), ("checker", "fam-j"))}}
        (root / "grounding" / "models.yaml").write_text(yaml.safe_dump(models))
        self.answer = root / "grounding" / "answer.j2"
        self.original = self.answer.read_text()
        source = (root / "grounding.yml").read_text()
        self.codes: list[int] = []  # every judge command's own exit code, in order (a tolerated failure too)
        self.steps = {s["name"]: s["run"] for s in yaml.safe_load(source)["jobs"]["grounding"]["steps"] if "run" in s}

    def cli(self, command: str) -> int:
        """One step's command line, in process; its exit code. Commands joined by ``&&`` stop at the first that
        fails; ``;`` runs the next whatever the last did (its code is the last one's); ``|| ...`` after a command
        (the workflow's ``|| echo ...``) lets it fail without failing the step."""
        import shlex
        import glob

        from typer.testing import CliRunner

        from judge.cli import app

        code = 0
        with chdir(self.root):
            for group in command.split(";"):
                for part in group.split("&&"):
                    part, _, tolerated = part.partition("||")
                    args = [a for word in shlex.split(part.strip())[1:] for a in (sorted(glob.glob(word)) or [word] if "*" in word else [word])]
                    self.codes.append(code := CliRunner().invoke(app, args, catch_exceptions=False).exit_code)
                    code = 0 if tolerated.strip() else code
                    if code:
                        break
        return code

    def step(self, prefix: str) -> int:
        return self.cli(next(cmd for name, cmd in self.steps.items() if name.startswith(prefix)))

    def cold(self) -> None:
        shutil.rmtree(self.root / ".cache", ignore_errors=True)
        shutil.rmtree(self.root / "artifacts", ignore_errors=True)

    def push(self) -> tuple[int, int]:
        """The push to main: calibrate (if stale) and pin the baseline; (calibrate's exit code, the pin's)."""
        self.answer.write_text(self.original)
        self.cold()
        return self.step("Calibrate"), self.step("Run and pin")

    def pull_request(self, kind: str) -> int:
        """A pull request of ``kind`` (PROMPTS) with a cold cache: the gate step's exit code."""
        line = PROMPTS[kind]
        self.answer.write_text(self.original if line is None else self.original.replace("{% block system %}\n", "{% block system %}\n" + line + "\n", 1))
        self.cold()
        try:
            return self.step("Run and gate")
        finally:
            self.answer.write_text(self.original)
