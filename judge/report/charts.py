"""Small inline SVG charts (no network, no JavaScript): stacked label bars and plain value bars."""

from __future__ import annotations

from html import escape

from judge.report.format import no_bidi
from judge.verdicts import CONTRADICTED, JUDGE_ERROR, PARTIALLY_SUPPORTED, SUPPORTED, UNSUPPORTED, UNSURE

LABEL_COLOURS = {
    SUPPORTED: "#2e7d32",
    PARTIALLY_SUPPORTED: "#f9a825",
    UNSUPPORTED: "#78909c",
    CONTRADICTED: "#c62828",
    JUDGE_ERROR: "#6a1b9a",
    UNSURE: "#8d6e63",
}


def stacked_labels(rows: dict[str, dict], title: str, width: int = 640) -> str:
    """One horizontal bar per row, split by label counts (``rows[name]["labels"]``)."""
    bar_h, gap, left = 22, 8, 170
    height = 40 + len(rows) * (bar_h + gap) + 30
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" aria-label="{escape(title)}">',
             f'<text x="0" y="16" font-size="14" font-weight="bold">{escape(title)}</text>']
    span = width - left - 60
    for i, (name, row) in enumerate(rows.items()):
        y = 30 + i * (bar_h + gap)
        total = sum(row["labels"].values()) or 1
        parts.append(f'<text x="0" y="{y + 15}" font-size="12">{escape(no_bidi(name)[:24])}</text>')
        x = left
        for label, n in row["labels"].items():
            if not n:
                continue
            w = span * n / total
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{LABEL_COLOURS.get(label, "#999")}">'
                f"<title>{escape(label)}: {n}</title></rect>"
            )
            x += w
        parts.append(f'<text x="{left + span + 6}" y="{y + 15}" font-size="12">{total}</text>')
    ly = 30 + len(rows) * (bar_h + gap) + 10
    lx = 0
    for label, colour in LABEL_COLOURS.items():
        parts.append(f'<rect x="{lx}" y="{ly}" width="10" height="10" fill="{colour}"/><text x="{lx + 14}" y="{ly + 9}" font-size="11">{label}</text>')
        lx += 14 + 7 * len(label) + 12
    parts.append("</svg>")
    return "".join(parts)


def value_bars(values: dict[str, float | None], title: str, width: int = 640, maximum: float = 1.0) -> str:
    """One bar per key, for values in [0, maximum] (None drawn as n/a)."""
    bar_h, gap, left = 20, 6, 170
    height = 30 + len(values) * (bar_h + gap) + 10
    span = width - left - 60
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" aria-label="{escape(title)}">',
             f'<text x="0" y="16" font-size="14" font-weight="bold">{escape(title)}</text>']
    for i, (name, v) in enumerate(values.items()):
        y = 26 + i * (bar_h + gap)
        parts.append(f'<text x="0" y="{y + 14}" font-size="12">{escape(no_bidi(name)[:24])}</text>')
        if v is None:
            parts.append(f'<text x="{left}" y="{y + 14}" font-size="12">n/a</text>')
            continue
        w = span * max(0.0, min(v, maximum)) / maximum
        parts.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="#1565c0"><title>{v:.3f}</title></rect>')
        parts.append(f'<text x="{left + w + 6:.1f}" y="{y + 14}" font-size="12">{v:.2f}</text>')
    parts.append("</svg>")
    return "".join(parts)


def heatmap(names: list[str], values: dict[tuple[str, str], float | None], title: str) -> str:
    """A symmetric judge x judge matrix (e.g. Cohen's kappa), cells coloured from red (-1) through white to
    blue (1), with the value written in each cell."""
    cell, left, top = 56, 150, 40
    size = len(names)
    width, height = left + size * cell + 10, top + size * cell + 90
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" aria-label="{escape(title)}">',
             f'<text x="0" y="16" font-size="14" font-weight="bold">{escape(title)}</text>']
    for i, a in enumerate(names):
        parts.append(f'<text x="0" y="{top + i * cell + cell / 2 + 4}" font-size="12">{escape(no_bidi(a)[:20])}</text>')
        parts.append(f'<text x="{left + i * cell + 4}" y="{top + size * cell + 14}" font-size="11" transform="rotate(30 {left + i * cell + 4} {top + size * cell + 14})">{escape(no_bidi(a)[:16])}</text>')
        for j, b in enumerate(names):
            v = 1.0 if a == b else values.get((a, b), values.get((b, a)))
            if v is None:
                fill, text = "#eeeeee", "n/a"
            else:
                t = max(-1.0, min(1.0, v))
                r, g, bl = (255, int(255 * (1 + t)), int(255 * (1 + t))) if t < 0 else (int(255 * (1 - t)), int(255 * (1 - 0.5 * t)), 255)
                fill, text = f"rgb({r},{g},{bl})", f"{v:.2f}"
            x, y = left + j * cell, top + i * cell
            parts.append(f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" fill="{fill}"><title>{escape(no_bidi(a))} / {escape(no_bidi(b))}: {text}</title></rect>')
            parts.append(f'<text x="{x + cell / 2 - 14}" y="{y + cell / 2 + 4}" font-size="12">{text}</text>')
    parts.append("</svg>")
    return "".join(parts)
