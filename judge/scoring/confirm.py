"""A changed verdict confirmed before it counts: a judge at temperature 0 still flips on some claims, so on ten
questions one flip in a cold-cache rerun would fail a build. Every claim whose verdict changed between a
baseline and a candidate (both sides of the change) is asked again ``k`` times as distinct calls (a sample
index in the cache key), by the run's trusted model judges, and settled by a test against the judge's noise
floor ``f`` (judge.runs.calibration):

    x of the n answered re-asks call it not grounded; under "grounded, flagged by noise" X ~ Binomial(n, f);
    the claim is not grounded when P(X >= x) < alpha / m (m: claims tested, Bonferroni), else supported.

Where even x = n could not pass (a floor too high for k), the change is left as it was and said so: a gate
never passes on a test that could not decide.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from pydantic import BaseModel

from judge.results import ClaimResult, RecordResult
from judge.scoring.claim_diff import claim_diff
from judge.verdicts import NOT_GROUNDED, SEVERITY, SUPPORTED, is_judged

ALPHA = 0.05
SAMPLES = 5  # re-asks per changed claim (and per judge), at least
MAX_SAMPLES = 15  # at most, where the noise floor asks for more (samples_for)
DEFAULT_FLOOR = 0.2  # a judge's noise floor when no calibration measured it: conservative
Side = str  # "a" or "b"
Reask = Callable[[list[tuple[str, ClaimResult]], int], dict[int, list[str]]]  # [(record id, claim)], k -> index -> labels


class Settled(BaseModel):
    """One changed claim, re-asked: its votes, the test, and the label it counts with."""

    side: str
    record_id: str
    model: str
    claim: str
    original: str
    votes: dict[str, int]
    not_grounded: int
    answered: int
    p_value: float | None
    label: str
    decided: bool  # False: the test could not decide (too few answered re-asks for the floor); the original label stands


def test(votes: list[str], floor: float, alpha: float) -> tuple[int, int, float | None, bool]:
    """(not grounded, answered, P(X >= x), decidable) for the re-asks' labels against the noise floor."""
    from scipy.stats import binom

    answered = [v for v in votes if is_judged(v)]
    n, x = len(answered), sum(v in NOT_GROUNDED for v in answered)
    if not n or floor**n >= alpha:
        return x, n, None, False
    return x, n, float(binom.sf(x - 1, n, floor)) if x else 1.0, True


def samples_for(floor: float, alpha: float, at_least: int = SAMPLES) -> int:
    """Re-asks enough that a real error still passes with one dissenting answer, within MAX_SAMPLES."""
    from scipy.stats import binom

    for n in range(max(at_least, 2), MAX_SAMPLES + 1):
        if binom.sf(n - 2, n, floor) < alpha:
            return n
    return max(at_least, MAX_SAMPLES) if floor**MAX_SAMPLES < alpha else at_least


def settle_label(votes: list[str], original: str, floor: float, alpha: float) -> tuple[str, int, int, float | None, bool]:
    x, n, p, decided = test(votes, floor, alpha)
    if not decided:
        return original, x, n, p, False
    if p < alpha:
        counts = Counter(v for v in votes if v in NOT_GROUNDED)
        top = max(counts.values())
        return max((lbl for lbl, k in counts.items() if k == top), key=lambda lbl: SEVERITY[lbl]), x, n, p, True
    return SUPPORTED, x, n, p, True


@dataclass
class Target:
    side: Side
    record_id: str
    model: str
    claim: ClaimResult
    where: tuple[int, int]  # (answer index, claim index) in its record


def _locate(results: Mapping[str, RecordResult], side: Side, record_id: str, model: str, text: str) -> Target | None:
    result = results.get(record_id)
    for i, a in enumerate(result.answers if result else []):
        if a.model == model:
            for j, c in enumerate(a.claims):
                if c.text == text:
                    return Target(side, record_id, model, c, (i, j))
    return None


def targets(diff, a_results: Mapping[str, RecordResult], b_results: Mapping[str, RecordResult]) -> list[Target]:
    """The claims to re-ask: both sides of every flip, and every not-grounded claim of either run (a noise flag
    of the baseline's is no fix either)."""
    wanted = []
    for c in diff.flips:
        wanted += [("a", c, c.claim_a or c.claim), ("b", c, c.claim)]
    wanted += [("b", c, c.claim) for c in diff.only_b if c.b in NOT_GROUNDED]
    wanted += [("a", c, c.claim) for c in diff.only_a if c.a in NOT_GROUNDED]
    found = [_locate(a_results if side == "a" else b_results, side, c.record_id, c.model, text) for side, c, text in wanted]
    found = [t for t in found if t is not None] + _reworded_flags(a_results, b_results, diff)
    return found + _standing_flags(a_results, b_results, {(t.side, t.record_id, t.where) for t in found})


def _standing_flags(a_results, b_results, have: set) -> list[Target]:
    """Every other not-grounded claim of either run (issue 49.5), changed or not, so that a noise flag of the
    baseline's cannot offset a real error of the candidate's in a delta."""
    out, common = [], set(a_results) & set(b_results)
    for side, results in (("a", a_results), ("b", b_results)):
        for rid, r in ((k, v) for k, v in results.items() if k in common):
            for i, x in enumerate(r.answers):
                out += [Target(side, rid, x.model, c, (i, j)) for j, c in enumerate(x.claims)
                        if c.label in NOT_GROUNDED and (side, rid, (i, j)) not in have]
    return out


def _reworded_flags(a_results, b_results, diff) -> list[Target]:
    """Claims not grounded in both runs under one label but reworded in B: a noise flag of the baseline's must
    not hide a real error of the candidate's (the zoo's claim flagged by chance in A, wrong in B)."""
    from judge.scoring.claim_diff import match_claims

    out = []
    for rid, b in b_results.items():
        a = a_results.get(rid)
        if a is None:
            continue
        for i, x in enumerate(a.answers):
            y = next((j for j, z in enumerate(b.answers) if z.model == x.model), None)
            if y is None:
                continue
            for ca, cb, _, _ in match_claims(x, b.answers[y]):
                if ca is not None and cb is not None and ca.label == cb.label and ca.label in NOT_GROUNDED and ca.text != cb.text:
                    out += [Target("a", rid, x.model, ca, (i, x.claims.index(ca))), Target("b", rid, x.model, cb, (y, b.answers[y].claims.index(cb)))]
    return out


def _same(c: ClaimResult) -> tuple:
    """Claims asked the same question: one set of re-asks serves both (a cache key would make them one call anyway)."""
    return c.text, tuple((x.doc_id, x.start_char, x.end_char) for x in c.candidates)


def settle_changes(
    a_results: dict[str, RecordResult], b_results: dict[str, RecordResult], common: list[str], reask: Reask, samples: int = SAMPLES,
    floor: float = DEFAULT_FLOOR, alpha: float = ALPHA,
) -> tuple[dict[str, RecordResult], dict[str, RecordResult], list[Settled]]:
    """Both runs' results with every changed claim settled by its re-asks, and what each test said."""
    found = targets(claim_diff(a_results, b_results, common), a_results, b_results)
    return _settle(found, b_results, a_results, reask, samples, floor, alpha)


def _settle(found: list[Target], b_results: dict, a_results: dict, reask: Reask, samples: int, floor: float, alpha: float):
    groups: dict[tuple, list[Target]] = {}
    for t in found:
        groups.setdefault((t.record_id, *_same(t.claim)), []).append(t)
    if not groups:
        return a_results, b_results, []
    asked = [(key[0], ts[0].claim) for key, ts in groups.items()]
    each = alpha / len(groups)
    votes = reask(asked, samples_for(floor, each, samples))
    out: list[Settled] = []
    updates: dict[tuple[str, str], list[tuple[tuple[int, int], str]]] = {}
    for n, (key, ts) in enumerate(groups.items()):
        for t in ts:
            label, x, answered, p, decided = settle_label(votes.get(n, []), t.claim.label, floor, each)
            out.append(Settled(side=t.side, record_id=t.record_id, model=t.model, claim=t.claim.text, original=t.claim.label,
                               votes=dict(Counter(votes.get(n, []))), not_grounded=x, answered=answered,
                               p_value=None if p is None else round(p, 6), label=label, decided=decided))
            updates.setdefault((t.side, t.record_id), []).append((t.where, label))
    return _relabel(a_results, "a", updates), _relabel(b_results, "b", updates), out


def _relabel(results: dict[str, RecordResult], side: str, updates: dict) -> dict[str, RecordResult]:
    out = dict(results)
    for (s, rid), changes in updates.items():
        if s != side:
            continue
        r = out[rid]
        answers = [a.model_copy(update={"claims": list(a.claims)}) for a in r.answers]
        for (i, j), label in changes:
            answers[i].claims[j] = answers[i].claims[j].model_copy(update={"label": label})
        out[rid] = r.model_copy(update={"answers": answers})
    return out


@dataclass
class Asker:
    """Who re-asks, and within what: the user's own judges' configs (never a run directory's config.yaml, which
    a pull request can edit to point a judge, and the user's key, at another server), cache, budget, records and
    noise floor. Nothing of it is read from run A or run B (issue 50: an edited run's cache_dir, dataset or
    summary.json floors decided a confirmation)."""

    models: Mapping  # name -> ModelConfig, from the user's own file
    models_from: str  # that file, for the one line that names a judge it lacks
    cache_dir: str | None = None  # the user's config's cache; None: ./.cache/judge (the current folder's), never a run's
    max_cost_usd: float | None = None  # what is left of the user's budget (None: no budget)
    on_call: Callable | None = None  # each call's record (the run's calls.jsonl, for judge run --baseline)
    config: object | None = None  # the user's own run config (RunConfig): its dataset (the records re-asked), its calibration (the floor)
    own_run: bool = False  # run B was made by this process from ``config`` (judge run --baseline): its controls are the user's measure

    @property
    def cache(self) -> str:
        return self.cache_dir if self.cache_dir is not None else str(Path(".cache/judge").resolve())

    def records(self) -> Mapping:
        """The records re-asked about: the user's own dataset's ({} without a run config of the user's)."""
        from judge.runs.inputs import records_by_id

        return records_by_id(self.config) if self.config is not None else {}

    def no_records(self) -> str | None:
        """Why nothing can be re-asked (no dataset of the user's to read the claims' sources from), or None."""
        if self.config is not None:
            return None
        return (f"{self.models_from} names no dataset: the re-asks read the claims' sources from your own run config's dataset, never "
                "from the one run B's config.yaml names (give --models YOUR_RUN_CONFIG: its models:, dataset:, calibration: and "
                "cache_dir: are read); the changes count as they are")


def default_asker(max_cost_usd: float | None = None) -> Asker:
    """The packaged configs/models.yaml's judges, when no models file is named."""
    from judge.llm.config import load_models
    from judge.resources import shipped_dir

    path = shipped_dir("configs") / "models.yaml"
    return Asker(load_models(path), f"{path} (no --models given)", max_cost_usd=max_cost_usd)


def user_asker(path: Path, max_cost_usd: float | None = None, load_models=None) -> Asker:
    """--models FILE: a run config (with dataset:) gives its models, dataset, calibration and cache; a models file its models only."""
    from judge.config import load_run_config
    from judge.llm.config import load_models as read_models, read_yaml

    data = read_yaml(Path(path), "models file")
    if isinstance(data, dict) and "dataset" in data:
        cfg = load_run_config(path)
        return Asker(dict(cfg.models), str(path), cache_dir=cfg.cache_dir, max_cost_usd=max_cost_usd, config=cfg)
    return Asker((load_models or read_models)(path), str(path), max_cost_usd=max_cost_usd)


def user_judges(config, asker: Asker):
    """Run B's config with each model judge's config the user's own; ConfigError when the user's file lacks one.
    The cache is the user's (their config's, else ./.cache/judge), never a folder run B's config.yaml names."""
    from judge.judges.registry import model_judges
    from judge.runs.rejudge import rejudge_config

    judges = list(config.adjudicate.judges)
    mine = {n: asker.models[n] for n in model_judges(judges) if n in asker.models}  # a judge it lacks: refused by rejudge_config
    new = rejudge_config(config, judges, mine, None, asker.models_from)
    new.cache_dir = asker.cache
    return new


def other_setup(config, asker: Asker) -> str | None:
    """Why the user's judges cannot settle run B's changes (one's model or settings differ from B's), or None."""
    from judge.judges.registry import model_judges

    for name in model_judges(list(config.adjudicate.judges)):
        if name not in asker.models or name not in config.models:
            continue
        theirs, mine = (m.model_dump(include=set(JUDGE_SETTINGS)) for m in (config.models[name], asker.models[name]))
        if theirs != mine:
            changed = ", ".join(k for k in JUDGE_SETTINGS if theirs.get(k) != mine.get(k))
            return (f"judge {name} of run B differs from {name} in {asker.models_from} ({changed}): "
                    "re-asking another judge measures another thing, not run B's noise")
    return None


class Reasker:
    """The run's trusted model judges, asked again about stored claims (samples 1..k), within ``asker``; a spent
    budget stops the re-asks (``stopped`` says so) and what was not re-asked keeps its verdict."""

    def __init__(self, config, records: Mapping, trusted: set[str] | None = None, use_cache: bool = True, asker: Asker | None = None):
        from judge.judges.model import ModelJudge
        from judge.llm import LLM, CallCache
        from judge.pipeline import build_panel
        from judge.prompts import load_prompt

        if asker is not None:
            config = user_judges(config, asker)
        self.llm = LLM(CallCache(config.cache_dir, enabled=use_cache), max_cost_usd=asker.max_cost_usd if asker else None,
                       on_call=asker.on_call if asker else None)
        self.records = records
        self.stopped: str | None = None
        self.refused: list[str] = []  # passages that do not slice their record's source: never shown to a judge
        self.untraced: dict[tuple[str, str], str] = {}  # (record id, claim text) -> why the claim is not its answer's (read)
        panel = build_panel(config, self.llm, load_prompt("judge"))
        self.judges = [j for j in panel.judges if isinstance(j, ModelJudge) and (trusted is None or j.name in trusted)]

    def read(self, results: Mapping[str, RecordResult]) -> None:
        """Each claim of ``results`` checked against its answer before any re-ask (the rule a rejudge applies,
        judge.judges.stored.claim_problem): one whose answer span is not its answer's text, or whose text says
        what neither its answer nor its question says (an edited run), is never re-asked; its verdict stands."""
        from judge.judges.stored import claim_problem

        for rid, r in results.items():
            record = self.records.get(rid)
            for a in r.answers:
                for c in a.claims:
                    why = claim_problem(rid, c, a.answer, record.question if record is not None else "")
                    if why is not None:
                        self.untraced.setdefault((rid, c.text), why)

    def __call__(self, asked: list[tuple[str, ClaimResult]], samples: int) -> dict[int, list[str]]:
        return asyncio.run(self._all(asked, samples)) if self.judges and asked else {}

    async def _all(self, asked, samples):
        labels = await asyncio.gather(*(self._one(rid, c, samples) for rid, c in asked))
        return dict(enumerate(labels))

    async def _one(self, record_id: str, claim: ClaimResult, samples: int) -> list[str]:
        from judge.judges.stored import ForgedPassage, ask_stored
        from judge.llm import BudgetExceeded

        record = self.records.get(record_id)
        if record is None:
            return []
        if (why := self.untraced.get((record_id, claim.text))) is not None:  # not the answer's claim: never shown to a judge
            self.refused.append(why)
            return []
        out = []
        for s in range(1, samples + 1):
            for j in self.judges:
                if self.stopped is not None:
                    return []  # a claim re-asked only in part is not settled: its verdict stands
                try:  # the one re-ask path (judge rejudge's): the stored claim, its passages checked against the source
                    out.append((await ask_stored(j, record_id, record, record.language, [claim], sample=s))[0]["1"][0].label)
                except ForgedPassage as e:  # a forged passage is never shown to a judge
                    self.refused.append(str(e))
                    return []
                except BudgetExceeded as e:
                    self.stopped = f"{e}: the re-asks stopped; the claims not re-asked in full keep their verdicts"
                    return []
        return out

    @property
    def calls(self) -> dict:
        t = self.llm.totals
        return {"calls": t.calls, "cache_hits": t.cache_hits, "prompt_tokens": t.prompt_tokens, "completion_tokens": t.completion_tokens,
                "cost_usd": round(t.cost_usd, 6), **({"stopped": self.stopped} if self.stopped else {}),
                **({"refused_passages": self.refused[:5]} if self.refused else {})}


# what a verdict depends on: not its price, timeouts or limits, nor its server (a baseline and its pull request
# reach one model through other ports or proxies)
JUDGE_SETTINGS = ("model", "mode", "temperature", "seed", "max_tokens")


def judges_of(run) -> tuple:
    """Each judge's name, model and verdict settings, and the judge prompts' hashes: re-asking settles a
    judge's noise, never a change of judge."""
    config = run.config
    models = []
    for name in config.adjudicate.judges:
        cfg = config.models[name].model_dump(include=set(JUDGE_SETTINGS)) if name in config.models else {}
        models.append((name, cfg.get("model"), tuple(cfg.get(k) for k in JUDGE_SETTINGS[1:])))
    prompts = tuple(sorted((k, v) for k, v in (run.manifest.get("prompts") or {}).items() if k.split(":")[0].startswith("judge")))
    return tuple(models), prompts


def same_judges(a, b) -> str | None:
    """None when A and B were judged by the same judges and prompts; else why re-asking cannot settle them."""
    (ma, pa), (mb, pb) = judges_of(a), judges_of(b)
    if ma != mb:
        show = lambda m: ", ".join(f"{n} ({x})" if x else n for n, x, _ in m)  # noqa: E731
        if [(n, x) for n, x, _ in ma] == [(n, x) for n, x, _ in mb]:
            return (f"the runs' judges ({show(mb)}) were run with other settings ({', '.join(JUDGE_SETTINGS[1:])}): "
                    "a change of judge is a change of the measure, not noise")
        return f"the runs were judged by different judges (A: {show(ma)}; B: {show(mb)}): a change of judge is a change of the measure, not noise"
    if pa != pb:
        return "the runs were judged with different judge prompts: a change of prompt is a change of the measure, not noise"
    return None


def reasker_for(run, use_cache: bool = True, asker: Asker | None = None) -> tuple[Reasker, float, str]:
    """B's trusted model judges to re-ask (those neither failed nor refused), about the user's own records, and
    their noise floor: the user's calibration's, else (a run this process made) its supported controls', else
    DEFAULT_FLOOR. Never a floor, a dataset or a cache that run B's files name."""
    from judge.runs.calibration import bounded_floor, noise_floor, user_floors

    asker = asker if asker is not None else default_asker()
    health = run.health
    gated = [j for j in (health.judges if health else []) if j.gated]
    # the canary fails only a plainly broken judge and a small run's is mostly "unchecked" (issue 44.3): every gated
    # judge it did not fail, and require: calibrated did not refuse, re-asks (before: only "passed", so on ten
    # questions nothing was re-asked and every flip counted as it came)
    refused = {t.judge for t in (health.refused if health else [])}
    trusted = {j.judge for j in gated if j.status != "failed" and j.judge not in refused} if gated else None
    reask = Reasker(run.config, asker.records(), trusted, use_cache=use_cache, asker=asker)
    names = [j.name for j in reask.judges]
    floors, cal_file = user_floors(asker, names, (run.manifest.get("prompts") or {}).get("judge"))
    where = f"your calibration ({cal_file})" if floors else None
    if not floors and asker.own_run and health is not None:  # the controls of a run made here, from the user's config
        floors = {n: bounded_floor(f) for n in names if (f := noise_floor(health, n)) is not None}
        where = "this run's supported controls" if floors else None
    if not floors:
        return reask, DEFAULT_FLOOR, f"assumed {DEFAULT_FLOOR} (no calibration of yours or supported control measured it)"
    return reask, max(floors.values()), f"{where}: " + ", ".join(f"{k} {v:.3f}" for k, v in floors.items())


def settled_summary(run, samples: int = SAMPLES, use_cache: bool = True, asker: Asker | None = None) -> tuple[dict, list[Settled], dict]:
    """(rates, settled claims, how asked): the run's rates with every not-grounded claim settled, so that a
    noise flag on ten questions does not break an absolute threshold."""
    from judge.verdicts import rates

    reask, floor, floor_from = reasker_for(run, use_cache, asker)
    results = {r.record_id: r for r in run.results()}
    reask.read(results)
    found = [t for rid, r in results.items() for i, a in enumerate(r.answers) for j, c in enumerate(a.claims)
             if c.label in NOT_GROUNDED and (t := Target("b", rid, a.model, c, (i, j)))]
    results, settled = _settle(found, results, {}, reask, samples, floor, ALPHA)[1:]
    overall, by_model = Counter(), {}
    for r in results.values():
        for a in r.answers:
            labels = Counter(c.label for c in a.claims)
            overall.update(labels)
            by_model.setdefault(a.model, Counter()).update(labels)
    how = {"samples": samples, "floor": floor, "floor_from": floor_from, "judges": [j.name for j in reask.judges], "usage": reask.calls}
    return {"overall": rates(overall), "by_model": {m: rates(c) for m, c in sorted(by_model.items())}}, settled, how


def run_asker(cfg, config_path: Path, store):
    """judge run --baseline's re-asks: the user's own run config's judges and cache, the budget left, each call
    recorded in the run's calls.jsonl."""
    left = None if cfg.max_cost_usd is None else max(0.0, cfg.max_cost_usd - store.usage().cost_usd)
    return Asker(dict(cfg.models), str(config_path), cache_dir=cfg.cache_dir, max_cost_usd=left, on_call=store.append_call, config=cfg,
                 own_run=True)


def record_reasks(store, summary: dict) -> None:
    """summary.json's usage (and the summary printed) summed again from calls.jsonl, the re-asks' calls included."""
    from judge.runs.store import read_json_object

    usage = store.usage().model_dump()
    if usage == summary.get("usage"):
        return
    summary["usage"] = usage
    on_disk = read_json_object(store.path / "summary.json")
    on_disk["usage"] = usage
    store.write_summary(on_disk)
