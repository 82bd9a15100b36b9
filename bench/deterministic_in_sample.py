"""The shipped he/en profiles of the deterministic judge, in sample, on the Hebrew answers and WiCE test: claim
accuracy and macro-F1 (the calibration's own measure), and the claims the dropped-negation rule flags, with
gold, prediction and evidence. A quick before/after check of a rule change, beside the leave-one-dataset-out
run of calibrate_deterministic.py (which refits).

Command: python bench/deterministic_in_sample.py (reads ../shared/data; about a minute).
"""

from __future__ import annotations

import numpy as np

from calibrate_deterministic import LABEL_INDEX, ROOT, macro_f1  # noqa: I001 (puts the project on sys.path)
import grounding_sets as sets
from judge.config import SearchSection
from judge.stages.support import decide, load_params


def main() -> None:
    data = ROOT.parent / "shared" / "data"
    params = load_params()
    for name, items, language in (("hebrew answers", sets.hebrew_answers(data), "he"), ("WiCE", sets.wice(data), "en")):
        items = [sets.featurize(i, SearchSection()) for i in items]
        rule = params.for_language(language)
        pred = np.array([LABEL_INDEX[decide(i.features, rule)[0]] for i in items])
        gold = np.array([LABEL_INDEX[i.label] for i in items])
        flagged = [i for i in items if i.features.dropped_negation]
        print(f"{name}: accuracy {float((pred == gold).mean()):.4f}, macro-F1 {macro_f1(gold, pred):.4f}, dropped negation flagged {len(flagged)}")
        for i in flagged:
            evidence = i.found[0].text if i.found else ""
            print(f"  gold {i.label} | rule {decide(i.features, rule)[0]} | claim: {i.text[:150]} | evidence: {evidence[:250]}")


if __name__ == "__main__":
    main()
