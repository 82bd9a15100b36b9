"""Human labels: the labelling sheet (judge.labels.sheet, a format) and which items a person labels
(judge.labels.sample); the corrected rates they give are a score section (judge.scoring.corrected)."""
