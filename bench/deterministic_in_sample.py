"""The shipped he/en profiles of the deterministic judge, in sample, on the Hebrew answers and WiCE test: claim
accuracy and macro-F1, and the claims the dropped-negation rule flags (with gold, prediction and evidence).
Command: python bench/deterministic_in_sample.py (reads ../shared/data; about a minute)."""
import sys
from pathlib import Path
root = Path(__file__).resolve().parents[1]; sys.path.insert(0, str(root)); sys.path.insert(0, str(root / "bench"))
import numpy as np
import grounding_sets as gs
from judge.runs.config import SearchSection
from judge.stages.support import decide, load_params
data = root.parent / "shared" / "data"
params = load_params()
for name, items, lang in (("hebrew answers", gs.hebrew_answers(data), "he"), ("WiCE", gs.wice(data), "en")):
    items = [gs.featurize(i, SearchSection()) for i in items]
    p = params.for_language(lang)
    pred = [decide(i.features, p)[0] for i in items]
    gold = [i.label for i in items]
    labels = sorted(set(gold))
    f1s = []
    for l in labels:
        tp = sum(a == l and b == l for a, b in zip(pred, gold)); fp = sum(a == l and b != l for a, b in zip(pred, gold)); fn = sum(a != l and b == l for a, b in zip(pred, gold))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    acc = np.mean([a == b for a, b in zip(pred, gold)])
    print(name, "accuracy", round(acc, 4), "macro-F1", round(float(np.mean(f1s)), 4), "dropped", sum(i.features.dropped_negation for i in items) if hasattr(items[0].features, "dropped_negation") else "-")
    for i in items:
        if i.features.dropped_negation:
            c = i.found[0].text if i.found else ""
            print("  gold", i.label, "| pred", decide(i.features, p)[0], "| claim:", i.text[:150], "| ev:", c[:250])
