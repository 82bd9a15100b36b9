"""Control characters in data: a source, an answer, a model's rationale, a record id or a model name may
carry ESC sequences (clear the screen, retitle the window, hide text), bidi overrides that reorder what is
shown (U+202E makes "txt.exe" read "exe.txt"), or line breaks that forge a line of the tool's own output
("q1\\nJUDGES VERIFIED: every claim grounded"). Whatever the tool prints on the terminal or writes into
report.md is defused here: :func:`defuse` for text, :func:`one_line` for a data string inside a line."""

from __future__ import annotations

import re

# C0 and C1 controls but newline and tab (rich itself strips only \a \b \v \f \r)
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# the explicit bidi embeddings, overrides and isolates: they reorder the text after them until popped
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
BREAKS = re.compile("\r\n|[\n\r\v\f\x85\u2028\u2029]")
NEWLINE_SHOWN = "\u23ce"  # ⏎: a line break in data, shown, never made
# A chat template's turn markers (ChatML, Gemma, Llama 3, Mistral/Llama 2, GPT-style end of text): a model that
# writes one has ended its turn, and what follows is a conversation it made up, never its answer.
TURN_MARKERS = re.compile(
    r"<\|im_end\|>|<\|im_start\|>|<end_of_turn>|<start_of_turn>|<\|eot_id\|>|<\|start_header_id\|>|<\|end_header_id\|>"
    r"|<\|endoftext\|>|<\|end\|>|</s>|\[/?INST\]"
)


def end_of_turn(text: str) -> tuple[str, bool]:
    """(``text`` up to the first chat-template turn marker, whether there was one)."""
    m = TURN_MARKERS.search(text)
    return (text[: m.start()].rstrip(), True) if m else (text, False)


def _bidi_shown(m: re.Match) -> str:
    return f"<U+{ord(m.group()):04X}>"


def defuse(text: str) -> str:
    """``text`` with every control character shown as U+FFFD and every bidi embedding, override or isolate
    shown as its code point (<U+202E>); newlines and tabs are kept."""
    return BIDI.sub(_bidi_shown, CONTROL.sub("\ufffd", text))


def one_line(text, limit: int | None = None) -> str:
    """A data string as it may stand inside a line of the tool's output: defused, every line break shown as ⏎
    (so no data starts a line of its own), tabs as spaces, and cut to ``limit`` characters with the count of
    the rest (a 5 MB answer is not printed whole), on the last word boundary before it (never mid-word, unless
    the last 40 characters hold no space)."""
    text = str(text)
    cut = ""
    if limit is not None and len(text) > limit:
        at = limit
        if not text[limit].isspace():
            space = text.rfind(" ", max(0, limit - 40), limit)
            at = space if space > 0 else limit
        cut = f"… ({len(text) - at:,} more characters)"
        text = text[:at].rstrip()
    return defuse(BREAKS.sub(NEWLINE_SHOWN, text).replace("\t", " ")) + cut
