"""Human labels (issue 38): the labelling sheet (seeded, stratified, extendable), judge validate on a filled
sheet, corrected rates in judge score / compare / the API / the pytest plugin, and bad labels refused one line
each. The runs are real (the deterministic judge on the shared Hebrew answers, whose gold claim labels serve
as a person's labels with --from-gold)."""

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import cli_inproc, shared


def _run(tmp: Path, name: str, profile: str = "") -> Path:
    config = tmp / f"{name}.yaml"
    config.write_text(f"name: {name}\ndataset: {{path: {shared('he_qa_sample.json')}}}\nanswers: {{path: {shared('he_model_answers_sample.jsonl')}}}\n"
                      f"decompose: {{method: sentences}}\nadjudicate: {{judges: [deterministic]{profile}}}\ncache_dir: {tmp / 'cache'}\n")
    result = cli_inproc("run", str(config), "--runs-dir", str(tmp / "runs"), "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    return Path(json.loads(result.stdout)["run_dir"])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("labels")
    strict = ", deterministic: {profiles: {default: {unsupported_below: 0.6}, he: {unsupported_below: 0.6}}}"
    return _run(tmp, "a"), _run(tmp, "b", strict)


def _sheet(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _strata(run_dir: Path) -> Counter:
    """The run's claims by (model under test, verdict): the draw's strata (issue 47 item 2)."""
    out = Counter()
    for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
        for a in json.loads(line)["answers"]:
            out.update((a["model"], c["label"]) for c in a["claims"] if c["label"] != "judge_error")
    return out


def test_a_sheet_is_seeded_stratified_and_extended_without_relabelling(runs, tmp_path):
    a, _ = runs
    first = cli_inproc("label", str(a), "--n", "20", "--out", str(tmp_path / "s.jsonl"), "--json")
    assert first.returncode == 0, first.stderr
    rows = _sheet(tmp_path / "s.jsonl")
    again = cli_inproc("label", str(a), "--n", "20", "--out", str(tmp_path / "t.jsonl"))
    assert again.returncode == 0 and _sheet(tmp_path / "t.jsonl") == rows  # the same seed draws the same items
    other = cli_inproc("label", str(a), "--n", "20", "--seed", "7", "--out", str(tmp_path / "u.jsonl"))
    assert other.returncode == 0 and {r["item"] for r in _sheet(tmp_path / "u.jsonl")} != {r["item"] for r in rows}
    sizes, drawn = _strata(a), Counter((r["model"], r["stratum"]) for r in rows)
    assert len(rows) == 20 and len({r["item"] for r in rows}) == 20 and set(drawn) == set(sizes)  # every model and verdict represented
    for r in rows:
        assert r["inclusion_probability"] == pytest.approx(drawn[(r["model"], r["stratum"])] / sizes[(r["model"], r["stratum"])])
        assert r["label"] == "" and r["claim"] and r["answer"] and r["run_id"]
        for p in r["passages"]:
            assert p["excerpt"] and isinstance(p["before"], str)
    rows[0]["label"], rows[1]["label"], rows[2]["note"] = "supported", "contradicted", "hard one"
    _write(tmp_path / "s.jsonl", rows)
    more = cli_inproc("label", str(a), "--more", "10", "--out", str(tmp_path / "s.jsonl"))
    assert more.returncode == 0, more.stderr
    extended = _sheet(tmp_path / "s.jsonl")
    assert len(extended) == 30 and [r["item"] for r in extended[:20]] == [r["item"] for r in rows]
    assert [r["label"] for r in extended[:3]] == ["supported", "contradicted", ""] and extended[2]["note"] == "hard one"
    drawn = Counter((r["model"], r["stratum"]) for r in extended)
    assert all(r["inclusion_probability"] == pytest.approx(drawn[(r["model"], r["stratum"])] / sizes[(r["model"], r["stratum"])]) for r in extended)
    # a larger first draw holds the same items: --more is the same as asking for more at once
    at_once = cli_inproc("label", str(a), "--n", "30", "--out", str(tmp_path / "v.jsonl"))
    assert at_once.returncode == 0 and {r["item"] for r in _sheet(tmp_path / "v.jsonl")} == {r["item"] for r in extended}
    refused = cli_inproc("label", str(a), "--n", "5", "--out", str(tmp_path / "s.jsonl"))
    assert refused.returncode == 2 and "--more" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1


def test_gold_labels_give_corrected_rates_everywhere(runs, tmp_path):
    a, _ = runs
    made = cli_inproc("label", str(a), "--n", "40", "--from-gold")
    assert made.returncode == 0, made.stderr
    rows = _sheet(a / "labels.jsonl")
    assert all(r["label"] in ("supported", "partially_supported", "unsupported", "contradicted") for r in rows)
    answers = cli_inproc("label", str(a), "--n", "16", "--level", "answer", "--from-gold")
    assert answers.returncode == 0, answers.stderr
    assert {r["label"] for r in _sheet(a / "labels-answers.jsonl")} <= {"grounded", "not_grounded"}
    scored = cli_inproc("score", str(a), "--json")  # the run's own filled sheets, no flag needed
    assert scored.returncode == 0, scored.stderr
    corrected = json.loads(scored.stdout)["corrected"]
    assert set(corrected["levels"]) == {"claim", "answer"} and corrected["levels"]["claim"]["labelled"] == 40
    models = corrected["levels"]["claim"]["models"]
    assert set(models) == {"all models", "faithful-paraphraser", "hallucinator", "mixed"}
    for metrics in models.values():
        for e in metrics.values():
            c, alone = e["corrected"], e["labels_only"]
            if c is None:  # a slice with too few labels has no interval, and says how many more it needs
                assert e["labels"] < 10 and f"too few labels for this model: {10 - e['labels']} more" in e["withheld"]
                continue
            assert 0 <= c["low"] <= c["estimate"] <= c["high"] <= 1 and c["lam"] in (None, 0.0)  # 0: the labels-only interval, narrower
            assert c["high"] - c["low"] <= (alone["high"] - alone["low"]) * 1.02 + 1e-9  # never much wider than the labels alone
    overall = models["all models"]["hallucination_rate"]
    gold_rate = sum(r["label"] in ("unsupported", "contradicted") for r in rows) / len(rows)
    assert overall["judge"] < overall["corrected"]["estimate"]  # this judge misses hallucinations; the labels say so
    assert abs(overall["labels_only"]["estimate"] - gold_rate) < 0.1
    agreement = corrected["levels"]["claim"]["judge_vs_labels"]["contradicted"]
    assert agreement["precision_ci"][0] <= agreement["precision"] <= agreement["precision_ci"][1]
    report_md = (a / "report.md").read_text(encoding="utf-8")
    assert "Corrected rates" in report_md and "the estimate to trust" in report_md
    page = (a / "report.html").read_text(encoding="utf-8")
    assert "Corrected rates" in page and page.count('class="lb-item"') == 56  # both sheets in the labelling mode
    assert page.count('class="lb-btn" data-label="not_grounded"') == 16 and page.count('class="lb-btn" data-label="contradicted"') == 40
    import judge
    from judge.runs.run import Run

    assert Run.open(a).corrected["levels"]["claim"]["labelled"] == 40
    again = judge.score(a, labels=[a / "labels.jsonl"])
    assert set(again.corrected["levels"]) == {"claim"}
    from judge.pytest_plugin import GroundingError, assert_grounded

    assert_grounded(a, max_corrected_hallucination=1.0)
    with pytest.raises(GroundingError, match=r"corrected_hallucination_rate<=0.05: .*upper bound"):
        assert_grounded(a, max_corrected_hallucination=0.05)


def test_validate_names_each_bad_line(runs, tmp_path):
    a, b = runs
    assert cli_inproc("label", str(a), "--n", "8", "--out", str(tmp_path / "s.jsonl")).returncode == 0
    rows = _sheet(tmp_path / "s.jsonl")
    rows[1]["label"] = "suported"
    rows[3]["label"] = "grounded"  # an answer label on a claim line
    rows[4].update(item="nowhere#0#0", record_id="nowhere", answer_index=0, claim_id=0)  # consistent, and no claim of the run
    rows[5]["run_id"] = "another-run"
    rows.append(dict(rows[0], label="supported"))  # the same claim twice
    sheet = _write(tmp_path / "filled.jsonl", rows)
    checked = cli_inproc("validate", str(sheet), "--run", str(a))
    assert checked.returncode == 2
    lines = checked.stderr.strip().splitlines()
    assert len(lines) == 5, lines
    assert "line 2: field label: 'suported' is not a claim label" in lines[0]
    assert "line 4: field label: 'grounded'" in lines[1]
    assert "line 6: field run_id: run 'another-run', where line 1 is of run" in lines[2]
    assert "line 9: field item" in lines[3] and "also on line 1" in lines[3]
    assert "line 5: field item: 'nowhere#0#0' is no claim of" in lines[4]
    clean = _write(tmp_path / "clean.jsonl", _sheet(tmp_path / "s.jsonl"))
    ok = cli_inproc("validate", str(clean), "--run", str(a), "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["items"] == 8
    foreign = cli_inproc("validate", str(clean), "--run", str(b))
    assert foreign.returncode == 2 and "not of" in foreign.stderr and len(foreign.stderr.strip().splitlines()) == 1


def test_bad_labels_are_refused_and_thin_ones_warned(runs, tmp_path):
    a, b = runs
    assert cli_inproc("label", str(a), "--n", "12", "--out", str(tmp_path / "s.jsonl")).returncode == 0
    rows = _sheet(tmp_path / "s.jsonl")
    chosen = sorted(rows, key=lambda r: r["stratum"] != "supported")[:5]  # the supported stratum first (its size follows the judge)
    assert len(chosen) == 5
    for r in chosen:
        r["label"] = "supported"
    sheet = _write(tmp_path / "five.jsonl", rows)
    other_run = cli_inproc("score", str(b), "--labels", str(sheet))
    assert other_run.returncode == 2 and "is of run" in other_run.stderr and len(other_run.stderr.strip().splitlines()) == 1
    stray = _write(tmp_path / "stray.jsonl", [dict(rows[0], item="he-s-001#0#999", record_id="he-s-001", answer_index=0, claim_id=999)] + rows[1:])
    refused = cli_inproc("score", str(a), "--labels", str(stray))
    assert refused.returncode == 2 and "line 1: field item: 'he-s-001#0#999' is no claim of" in refused.stderr
    scored = cli_inproc("score", str(a), "--labels", str(sheet), "--json")
    assert scored.returncode == 0, scored.stderr
    warnings = [x for x in scored.stderr.splitlines() if x.startswith("warning:")]
    assert any("claims of all models: too few labels for all models: 5 more" in w and "a gate on it fails" in w for w in warnings), warnings
    assert any("7 of the 12 sampled claims are not labelled yet" in w for w in warnings)
    bare = {f"{r['model']}/{r['stratum']}" for r in rows if r["label"] == ""} - {f"{r['model']}/{r['stratum']}" for r in chosen}
    assert bare and any("no claim of these strata (model/verdict, items) is labelled" in w and all(b in w for b in bare) for w in warnings)
    e = json.loads(scored.stdout)["corrected"]["levels"]["claim"]["models"]["all models"]["hallucination_rate"]
    assert e["corrected"] is None and e["labels_only"] is None and e["more_needed"] == 5 and e["labels"] == 5
    # every line labelled, all of one kind and all agreeing with the judge's supported: the labels-only interval is the exact one,
    # and the corrected one never collapses to the raw rate (issue 47 item 1)
    for r in rows:
        r["label"] = r["stratum"] if r["stratum"] in ("supported", "partially_supported", "unsupported", "contradicted") else "unsupported"  # unsure: no person's label
    agreeing = cli_inproc("score", str(a), "--labels", str(_write(tmp_path / "agree.jsonl", rows)), "--json")
    assert agreeing.returncode == 0, agreeing.stderr
    e = json.loads(agreeing.stdout)["corrected"]["levels"]["claim"]["models"]["all models"]["hallucination_rate"]
    c = e["corrected"]
    assert e["labels"] == 12 and c["high"] - c["low"] > 0.1 and c["se"] > 0.03, c  # 12 labels cannot give a +-0.03 interval
    for r in rows:
        r["label"] = "supported"
    same = cli_inproc("score", str(a), "--labels", str(_write(tmp_path / "same.jsonl", rows)), "--json")
    e = json.loads(same.stdout)["corrected"]["levels"]["claim"]["models"]["all models"]["hallucination_rate"]
    assert e["labels_only"]["low"] == 0 and e["labels_only"]["high"] == pytest.approx(0.2646, abs=1e-3)  # Clopper-Pearson 0 of 12
    assert any("all 12 labels give the same hallucination rate (0)" in w and "exact (Clopper-Pearson)" in w for w in same.stderr.splitlines())


def test_compare_gives_the_corrected_difference_and_gates_on_it(runs):
    a, b = runs
    for run in runs:
        if not (run / "labels.jsonl").exists():
            assert cli_inproc("label", str(run), "--n", "40", "--from-gold").returncode == 0
        assert cli_inproc("score", str(run)).returncode == 0
    warnings = json.loads((b / "scores.json").read_text(encoding="utf-8"))["corrected"]["warnings"]
    assert any(w.startswith("claims of faithful-paraphraser: the labels find fewer hallucinations than the judge") and
               "where over all models they find more" in w for w in warnings), warnings  # a correction against the overall direction: said
    from judge.scoring.corrected import MIN_LABELS

    labelled = sum(1 for r in _sheet(b / "labels.jsonl") if r["model"] == "hallucinator" and r["label"] not in ("", "skip"))
    thin = cli_inproc("compare", str(a), str(b), "--gate", "corrected_hallucination_rate<=1")  # a model short of MIN_LABELS fails the gate
    if labelled < MIN_LABELS:
        assert thin.returncode == 1 and (f"hallucinator: no valid corrected interval (too few labels for this model: "
                                         f"{MIN_LABELS - labelled} more") in thin.stdout, thin.stdout
    else:
        assert "hallucinator: no valid corrected interval" not in thin.stdout, thin.stdout
    assert cli_inproc("label", str(b), "--more", "10", "--from-gold").returncode == 0  # rescored with the extended sheet
    result = cli_inproc("compare", str(a), str(b), "--gate", "corrected_hallucination_rate<=1", "--json")
    assert result.returncode == 0, result.stdout
    out = json.loads(result.stdout)
    d = out["corrected"]["levels"]["claim"]["all models"]["hallucination_rate"]
    assert d["delta"] == pytest.approx(d["b"] - d["a"], abs=1e-6) and d["ci95"][0] < d["delta"] < d["ci95"][1]
    failed = cli_inproc("compare", str(a), str(b), "--gate", "corrected_hallucination_rate<=0.05")
    assert failed.returncode == 1 and "FAIL corrected_hallucination_rate<=0.05" in failed.stdout and "upper bound" in failed.stdout
    bad = cli_inproc("compare", str(a), str(b), "--gate", "corrected_faithfulness<=0.5")
    assert bad.returncode == 2 and "takes >=" in bad.stderr


def test_a_larger_sample_holds_every_smaller_one():
    """The draw behind --more: each stratum gets one label first, then seats by size (D'Hondt); allocation
    never takes a label away as n grows, stops at the stratum's size, and draws the same items for a seed."""
    import random

    from judge.labels.sample import allocation, draw

    rng = random.Random(3)
    for _ in range(50):
        sizes = {f"s{k}": rng.randint(0, 40) for k in range(rng.randint(1, 5))}
        total = sum(sizes.values())
        previous = dict.fromkeys(sizes, 0)
        for n in range(total + 3):
            now = allocation(sizes, n)
            assert sum(now.values()) == min(n, total) and all(previous[s] <= now[s] <= sizes[s] for s in sizes)
            if n >= sum(1 for v in sizes.values() if v):
                assert all(now[s] >= 1 for s in sizes if sizes[s])
            previous = now
    strata = {"supported": [f"c{k}" for k in range(80)], "unsupported": [f"u{k}" for k in range(15)], "contradicted": ["x1", "x2"]}
    small, large = draw(strata, 10, 0, "claim"), draw(strata, 30, 0, "claim")
    assert set(small) < set(large) and draw(strata, 10, 0, "claim") == small and draw(strata, 10, 1, "claim") != small
    assert {k for k in small if k.startswith("x")} and all(0 < p <= 1 for p in large.values())


def test_a_gate_on_a_run_without_labels_cannot_pass(runs, tmp_path):
    import shutil

    a, b = runs
    bare = tmp_path / "bare"
    shutil.copytree(b, bare, ignore=shutil.ignore_patterns("labels*.jsonl", "*.lock"))
    assert cli_inproc("score", str(bare)).returncode == 0
    missing = cli_inproc("compare", str(a), str(bare), "--gate", "corrected_hallucination_rate<=1")
    assert missing.returncode == 1 and "no corrected claim-level hallucination rate" in missing.stdout and "cannot be checked" in missing.stdout
    allowed = cli_inproc("compare", str(a), str(bare), "--gate", "corrected_hallucination_rate<=1", "--allow-missing", "--json")
    assert allowed.returncode == 0 and not json.loads(allowed.stdout)["corrected"]["available"]


def _corrected(result) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["corrected"]


def test_the_design_comes_from_the_run_never_the_sheet(runs, tmp_path):
    """Issue 50 item 3: stratum, model and inclusion probability on a sheet's lines are never used (the estimate
    takes each item's model and verdict from the run; tiny probabilities are no NaN); a sheet that is not the
    run's seeded draw (a line removed, two seeds) is refused with one line; a model without enough labels
    fails the bound gate, it is never skipped."""
    a, _ = runs
    assert cli_inproc("label", str(a), "--n", "45", "--from-gold", "--out", str(tmp_path / "s.jsonl")).returncode == 0
    rows = _sheet(tmp_path / "s.jsonl")
    honest = _corrected(cli_inproc("score", str(a), "--labels", str(tmp_path / "s.jsonl"), "--json"))
    edited = [dict(r, inclusion_probability=p, stratum="contradicted", model="hallucinator")
              for r, p in zip(rows, [1e-12, 0.5, 1.0] * len(rows))]  # tiny ones are refused by the sheet reader
    forged = _corrected(cli_inproc("score", str(a), "--labels", str(_write(tmp_path / "e.jsonl", edited)), "--json"))
    assert forged["levels"] == honest["levels"]
    removed = cli_inproc("score", str(a), "--labels", str(_write(tmp_path / "r.jsonl", rows[1:])))
    assert removed.returncode == 2 and "not the seeded draw (seed 0)" in removed.stderr and len(removed.stderr.strip().splitlines()) == 1
    checked = cli_inproc("validate", str(tmp_path / "r.jsonl"), "--run", str(a))  # what score refuses, validate refuses
    assert checked.returncode == 2 and "not the seeded draw (seed 0)" in checked.stderr
    reseeded = cli_inproc("score", str(a), "--labels", str(_write(tmp_path / "m.jsonl", [dict(rows[0], seed=3)] + rows[1:])))
    assert reseeded.returncode == 2 and "line 2: field seed: seed 0, where line 1 has 3" in reseeded.stderr
    skipped = [dict(r, label="skip") if r["model"] == "mixed" else r for r in rows]  # one model left unlabelled
    thin = _corrected(cli_inproc("score", str(a), "--labels", str(_write(tmp_path / "k.jsonl", skipped)), "--json"))
    mixed = thin["levels"]["claim"]["models"]["mixed"]["hallucination_rate"]
    assert mixed["corrected"] is None and mixed["labels"] == 0 and "too few labels for this model: 10 more" in mixed["withheld"]
    gate = cli_inproc("compare", str(a), str(a), "--gate", "corrected_hallucination_rate<=1")
    assert gate.returncode == 1 and "mixed: no valid corrected interval" in gate.stdout, gate.stdout


def test_an_edited_corrected_block_is_one_line_exit_2(runs, tmp_path):
    """Issue 50 item 9: scores.json's corrected block is read back through its schema; every edited shape is one
    line naming scores.json and the field, exit 2, never a traceback and never a pass."""
    import shutil

    a, _ = runs
    if not (a / "labels.jsonl").exists():
        assert cli_inproc("label", str(a), "--n", "40", "--from-gold").returncode == 0
    assert cli_inproc("score", str(a)).returncode == 0
    good = json.loads((a / "scores.json").read_text(encoding="utf-8"))
    overall = ("levels", "claim", "models", "all models", "hallucination_rate", "corrected")

    def edited(path, value):
        scores = json.loads(json.dumps(good))
        node = scores["corrected"]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return scores

    shapes = [edited(("levels",), []), edited(("levels", "claim", "models"), None), edited((*overall, "high"), "low"),
              edited((*overall, "high"), 2.0), edited((*overall, "low"), 0.99), edited((*overall, "se"), -1),
              edited(("levels", "claim", "models", "all models"), {"hallucination_rate": 5}), edited(("files",), "x"),
              edited(("levels", "nowhere"), {}), {**good, "corrected": [1, 2]}]
    for k, scores in enumerate(shapes):
        run = tmp_path / f"r{k}"
        shutil.copytree(a, run, ignore=shutil.ignore_patterns("*.lock"))
        (run / "scores.json").write_text(json.dumps(scores), encoding="utf-8")
        result = cli_inproc("compare", str(a), str(run), "--gate", "corrected_hallucination_rate<=1")
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1 and "scores.json" in lines[0] and "corrected" in lines[0], (k, result.stderr, result.stdout)


def test_labels_given_once_stay_with_the_run(runs, tmp_path):
    """Issue 47 item 5: a sheet given to judge score from elsewhere is kept with the run: judge label --more
    (which rescores) keeps the corrected rates, and a rescoring whose labels are gone says so."""
    import shutil

    _, b = runs
    run = tmp_path / "run"
    shutil.copytree(b, run, ignore=shutil.ignore_patterns("labels*.jsonl", "scores.json", "*.lock"))
    assert cli_inproc("label", str(run), "--n", "30").returncode == 0  # the run's own sheet, never filled
    assert cli_inproc("label", str(run), "--n", "30", "--from-gold", "--out", str(tmp_path / "downloaded.jsonl")).returncode == 0
    first = _corrected(cli_inproc("score", str(run), "--labels", str(tmp_path / "downloaded.jsonl"), "--json"))
    assert first["levels"]["claim"]["labelled"] > 0
    (tmp_path / "downloaded.jsonl").unlink()  # the browser's download, cleaned up
    assert cli_inproc("label", str(run), "--more", "5").returncode == 0  # rescores the run
    kept = json.loads((run / "scores.json").read_text(encoding="utf-8"))["corrected"]
    assert kept["levels"] == first["levels"]
    (run / "labels-scored.jsonl").unlink()
    again = cli_inproc("score", str(run), "--json")
    assert again.returncode == 0 and "no longer with the run: no corrected rate is given now" in again.stderr
    gate = cli_inproc("compare", str(run), str(run), "--gate", "corrected_hallucination_rate<=1")
    assert gate.returncode == 1


def test_unsure_claims_count_the_same_way_in_the_population_the_raw_rate_and_the_labels(runs, tmp_path):
    """Issue 47 item 6: an unsure claim (the no-model judge's) is sampled, and it counts in the corrected rates'
    population and raw rate exactly as in the run's own rates (judged; no hallucination, no credit)."""
    import shutil

    a, _ = runs
    edited = tmp_path / "edited"
    shutil.copytree(a, edited, ignore=shutil.ignore_patterns("labels*.jsonl", "scores.json", "*.lock"))
    rows = [json.loads(x) for x in (edited / "results.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    k = 0
    for r in rows:
        for ans in r["answers"]:
            for c in ans["claims"]:
                k += 1
                if k % 4 == 0:
                    c["label"], c["evidence"] = "unsure", []
                    for v in c["verdicts"]:
                        v.update(label="unsure")
    (edited / "results.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    merged = cli_inproc("merge", str(edited), "--runs-dir", str(tmp_path / "m"), "--json")
    assert merged.returncode in (0, 3), merged.stderr
    (run,) = (tmp_path / "m").iterdir()
    assert cli_inproc("label", str(run), "--n", "40").returncode == 0
    sheet = _sheet(run / "labels.jsonl")
    assert "unsure" in {r["stratum"] for r in sheet}
    _write(run / "labels.jsonl", [dict(r, label="supported" if i % 3 else "unsupported") for i, r in enumerate(sheet)])
    scored = cli_inproc("score", str(run), "--json")
    assert scored.returncode == 0, scored.stderr
    scores = json.loads(scored.stdout)
    overall = scores["overall"]
    e = scores["corrected"]["levels"]["claim"]["models"]["all models"]
    judged = overall["claims"] - overall["labels"].get("judge_error", 0)
    assert overall["labels"]["unsure"] > 0 and e["hallucination_rate"]["items"] == judged
    assert e["hallucination_rate"]["judge"] == pytest.approx(overall["hallucination_rate"], abs=1e-6)
    assert e["faithfulness"]["judge"] == pytest.approx(overall["faithfulness"], abs=1e-6)
