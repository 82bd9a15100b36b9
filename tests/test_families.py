"""Issue 28.4: families and judge names. A `family:` override is read in canonical form (NFKC, look-alike
letters, case, letters and digits, company suffixes, an alias table), may not contradict the family a known
model id tells, and may not spell a known family in a way the table does not read; judges of a panel have
distinct names, none of them reserved. Each rule is tried through the config loader (run, families, doctor),
the Python API and rejudge, with generated spellings (hypothesis) as well as the issue's cases."""

from __future__ import annotations

import math
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import judge
from judge.cli import app
from judge.errors import InputError
from judge.llm import ModelConfig, SameFamilyError, check_cross_family, family_of
from judge.llm.families import ALIASES, normalise_family
from tests.conftest import BUNDLED_SAMPLE, ROOT

ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"
OPENAI_SPELLINGS = ["Open AI", "open_ai", "OpenAI Inc", "OpenAI, Inc.", "ＯｐｅｎＡＩ", "\u041epenAI", "Open\u0410I", "оpenаі",
                    "OPEN-AI", " openai ", "Open\u200bAI", "gpt", "GPT", "ChatGPT", "OpenAI LLC"]


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.mark.parametrize("spelling", OPENAI_SPELLINGS)
def test_every_spelling_of_openai_is_openai_and_clashes_with_an_openai_model(spelling):
    house = ModelConfig(model="hosted_vllm/house-judge", family=spelling)  # an id that tells nothing: the override counts
    assert family_of(house) == "openai"
    with pytest.raises(SameFamilyError):
        check_cross_family(house, [ModelConfig(model="openai/gpt-4o")])
    with pytest.raises(SameFamilyError):  # a recorded answer's family field is read the same way
        check_cross_family(ModelConfig(model="openai/gpt-4o-mini"), [ModelConfig(model="answers/x", family=spelling)])


@pytest.mark.parametrize("model,family", [
    ("openai/gpt-4o-mini", "anthropic"), ("openai/gpt-4o-mini", "Claude"), ("openai/gpt-4o-mini", "house"),
    ("anthropic/claude-3-5-haiku-latest", "Open AI"), ("gpt-4o", "meta"), ("openai/my-finetune", "custom"),
    ("together_ai/meta-llama/Llama-3-70b", "mistral"), ("hosted_vllm/qwen2.5-7b", "fam-q"),
])
def test_an_override_that_contradicts_a_known_model_id_is_refused(tmp_path, model, family):
    with pytest.raises(ValueError, match="contradicts the model id"):
        ModelConfig(model=model, family=family)
    models = tmp_path / "models.yaml"
    models.write_text(f"models:\n  m: {{model: '{model}', family: '{family}'}}\n")
    for args in (("families", "--config", models), ("doctor", "--models", models)):
        result = cli(*args)
        assert result.exit_code == 2 and "contradicts the model id" in result.output and "\n" not in result.output.strip(), result.output


@pytest.mark.parametrize("family", ["my-openai", "gpt4-family", "claude-ish", "Meta-Llama-Team", "Gemini Pro Users"])
def test_an_override_that_spells_a_known_family_oddly_is_refused(family):
    with pytest.raises(ValueError, match="reads as a spelling of"):
        ModelConfig(model="hosted_vllm/house-judge", family=family)


@pytest.mark.parametrize("model,family,expected", [
    ("openai/gpt-4o-mini", "gpt", "openai"), ("openai/gpt-4o-mini", "OpenAI Inc", "openai"), ("hosted_vllm/house", "house-models", "house-models"),
    ("openai/j", "fam-j", "fam-j"), ("hosted_vllm/x", "Mistral AI", "mistral"), ("hosted_vllm/x", "xAI", "xai"), ("hosted_vllm/x", "01-ai", "01-ai"),
])
def test_overrides_that_agree_or_name_an_unplaceable_model_stand(model, family, expected):
    api_base = "http://127.0.0.1:1/v1" if model == "openai/j" else None
    assert family_of(ModelConfig(model=model, family=family, api_base=api_base)) == expected


def test_custom_families_are_compared_in_canonical_form():
    a = ModelConfig(model="hosted_vllm/a", family="fam-b")
    for spelling in ("Fam B", "fam_b", "FAM-B", "ｆａｍ－ｂ", "famb"):
        with pytest.raises(SameFamilyError):
            check_cross_family(a, [ModelConfig(model="hosted_vllm/b", family=spelling)])
    assert check_cross_family(a, [ModelConfig(model="hosted_vllm/c", family="fam-c")]) == []


latin = st.sampled_from(sorted({k for k in ALIASES if len(k) >= 4 or k == "gpt"}))


@settings(deadline=None, derandomize=True, max_examples=150)
@given(alias=latin, data=st.data())
def test_property_a_disguised_alias_is_always_its_family(alias, data):
    """Case, width, separators, zero-width characters, company suffixes and look-alike letters change nothing."""
    look_alike = {"a": "а", "o": "о", "e": "е", "p": "р", "c": "с", "i": "і", "x": "х"}
    out = []
    for ch in alias:
        choice = data.draw(st.integers(0, 4), label="disguise")
        if choice == 1:
            ch = ch.upper()
        elif choice == 2:
            ch = chr(ord(ch) + 0xFEE0) if ch.isascii() and ch.isalnum() else ch  # fullwidth
        elif choice == 3 and ch in look_alike:
            ch = look_alike[ch]
        out.append(ch)
        if data.draw(st.booleans(), label="separator"):
            out.append(data.draw(st.sampled_from([" ", "-", "_", ".", "\u200b", "/"]), label="which"))
    spelling = "".join(out) + data.draw(st.sampled_from(["", " Inc", ", Inc.", " AI", " Labs", " Corp"]), label="suffix")
    family = ALIASES[alias]
    assert normalise_family(spelling) == family, (spelling, unicodedata.normalize("NFKC", spelling))
    try:
        cfg = ModelConfig(model="hosted_vllm/x", family=spelling)
    except ValueError:
        return  # refused: never a silent new family
    assert family_of(cfg) == family


# -- judge names ---------------------------------------------------------------------------------------------


def _config(tmp_path, models: str, judges: str) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(f"dataset: {{path: {BUNDLED_SAMPLE}}}\nanswers: {{path: {ANSWERS}}}\ncache_dir: {tmp_path / 'cache'}\n"
                    f"models: {models}\nadjudicate: {{judges: {judges}}}\n")
    return path


J = "{{model: openai/{m}, api_base: 'http://127.0.0.1:9/v1', family: fam-{m}, api_key_env: NO_SUCH_KEY_28{extra}}}"


@pytest.mark.parametrize("models,judges,expect", [
    ("{a: " + J.format(m="a", extra="") + "}", "[a, a]", "listed twice"),
    ("{a: " + J.format(m="a", extra=", name: same") + ", b: " + J.format(m="b", extra=", name: same") + "}", "[a, b]", "both named 'same'"),
    ("{a: " + J.format(m="a", extra=", name: deterministic") + "}", "[a, deterministic]", "reserved"),
    ("{a: " + J.format(m="a", extra=", name: triage") + "}", "[a]", "reserved"),
    ("{a: " + J.format(m="a", extra=", name: panel") + "}", "[a]", "reserved"),
    ("{deterministic: " + J.format(m="a", extra="") + "}", "[deterministic]", "reserved"),
    ("{triage: " + J.format(m="a", extra="") + "}", "[triage]", "reserved"),
])
def test_judge_names_are_unique_and_never_reserved(tmp_path, models, judges, expect):
    config = _config(tmp_path, models, judges)
    result = cli("run", config, "--runs-dir", tmp_path / "runs", "--no-progress")
    assert result.exit_code == 2 and expect in result.output and "\n" not in result.output.strip(), result.output
    assert not (tmp_path / "runs").exists()  # refused before any call, nothing written
    import yaml

    with pytest.raises(InputError, match=expect):
        judge.evaluate({**yaml.safe_load(config.read_text()), "cache_dir": str(tmp_path / "cache")}, runs_dir=tmp_path / "api")


def test_rejudge_refuses_a_judge_twice_or_a_reserved_name(tmp_path):
    runs = tmp_path / "runs"
    assert cli("run", ROOT / "configs" / "deterministic.yaml", "--limit", "1", "--runs-dir", runs, "--no-progress").exit_code in (0, 3)
    (run_dir,) = runs.iterdir()
    result = cli("rejudge", run_dir, "--judge", "deterministic", "--judge", "deterministic", "--runs-dir", tmp_path / "out")
    assert result.exit_code == 2 and "listed twice" in result.output, result.output


# -- bounds --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bounds", [
    {"min_faithfulness": math.nan}, {"max_hallucination": math.nan}, {"min_faithfulness": math.inf}, {"max_hallucination": -math.inf},
    {"min_faithfulness": 1.5}, {"max_hallucination": -0.1}, {"max_judge_errors": -1}, {"max_judge_errors": 1.5}, {"min_faithfulness": "0.8"},
])
def test_plugin_bounds_refuse_nan_infinity_and_out_of_range(bounds):
    from judge.pytest_plugin import assert_grounded

    with pytest.raises(InputError, match=next(iter(bounds))):
        assert_grounded(ROOT / "no-such-run", **bounds)  # refused before the run is even looked for


@pytest.mark.parametrize("spec", ["faithfulness:nan", "faithfulness:NaN", "faithfulness:inf", "faithfulness:-inf", "faithfulness:-0.1",
                                  "hallucination_rate:1e999"])
def test_gates_refuse_nan_and_infinity(spec):
    from judge.scoring.compare import Gate

    with pytest.raises(ValueError, match="MAX_DROP"):
        Gate.parse(spec)


@pytest.mark.parametrize("model,family,refused", [
    ("gpt-4o", "anthropic", "contradicts the model id"), ("openai/gpt-4o-mini", "Claude", "contradicts the model id"),
    ("claude-3-5-haiku", "my-openai", "contradicts the model id"), ("house-bot", "my-openai", "reads as a spelling of"),
    ("gpt-4o", "Open AI", None), ("house-bot", "fam-h", None),
])
def test_a_recorded_answers_family_is_read_like_an_override(tmp_path, model, family, refused):
    """A recorded answer's family field passes the rule a config's family: passes: "anthropic" on a gpt-4o
    answer would let a gpt judge grade its own family's answers. Refused in validate and run, naming the file,
    the record and the field."""
    import json

    from judge.datasets.answers import load

    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"record_id": "he-pkg-001", "model": model, "answer": "x.", "family": family}) + "\n", encoding="utf-8")
    loaded = load(answers)
    if refused is None:
        assert not loaded.problems and loaded.items[0].family == family
        return
    assert not loaded.items and [(p.record_id, p.field) for p in loaded.problems] == [("he-pkg-001 (line 1)", "family")]
    assert refused in loaded.problems[0].message
    result = cli("validate", answers)
    assert result.exit_code == 2 and "field family" in result.output and refused in result.output, result.output
