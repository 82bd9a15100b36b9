"""The one boundary every input crosses (DESIGN.md, "One boundary, by construction").

Every entry point reads its inputs through here: YAML (run configs, models files, a run's config.yaml,
deterministic parameters), JSON side files and lines outside the dataset adapters (corpus chunks, retrieval
runs, predictions, ratings), mappings and records given in Python, command-line numbers and paths, and the
numeric environment. Whatever is wrong becomes one line per problem naming the file (or flag, or argument),
the record and the field, raised as the project's own error type (:class:`judge.errors.InputError`; exit 2
at the CLI). The limits hold before a value is used or formatted:

- YAML: at most ``MAX_YAML_BYTES`` read; nesting at most ``MAX_DEPTH`` levels (counted while composing, so a
  500-deep file never reaches Python's recursion limit); at most ``MAX_ALIASES`` aliases and
  ``MAX_YAML_NODES`` nodes once every alias is expanded (a 390-byte "billion laughs" file is refused after
  composing a few dozen nodes, not after building gigabytes); recursive aliases refused.
- Values (YAML, JSON, Python): whole numbers within +-``MAX_INT`` (2**53, what JSON readers keep exactly),
  finite floats, text without lone UTF-16 surrogates (no file can hold them: every write would fail), keys
  that are text, nesting within ``MAX_DEPTH``.
- Command-line numbers within ``MAX_FLAG`` (an int flag: ``--limit 99999999999999999999`` is one line),
  command-line text and paths that are text (an undecodable byte reaches Python as a lone surrogate).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from judge.errors import InputError
from judge.numeric import MAX_DIGITS, MAX_INT, BadNumber, Refused, _TooManyDigits, digits_message, parse_number  # noqa: F401 (the JSON door and its callers)

MAX_DEPTH = 64  # as the dataset readers (judge.datasets.base.MAX_DEPTH): far beyond what any of our files needs
MAX_YAML_BYTES = 4_000_000  # a config or models file is a few KB
MAX_ALIASES = 200
MAX_YAML_NODES = 200_000  # after expanding every alias
MAX_FLAG = 10**12  # records, documents, candidates, workers: far beyond any real run, far below what breaks

SURROGATE = re.compile("[\ud800-\udfff]")


class ArgumentError(InputError, ValueError):
    """A command-line value (or an API argument) out of bounds; the message names the flag."""


def shown_path(path: Any) -> str:
    """A path or name as it may be printed: lone surrogates written as escapes (printing them would fail)."""
    return str(path).encode("utf-8", "backslashreplace").decode("utf-8")


def surrogate_message(text: str) -> str:
    m = SURROGATE.search(text)
    escaped = m.group().encode("utf-8", "backslashreplace").decode()
    return f"expected Unicode text, found a lone surrogate {escaped} at character {m.start()} (a broken \\u escape or a byte that is not UTF-8)"


def _field(path: tuple, limit: int = 80) -> str:
    """A field path as it may be printed: keys cut and escaped, the whole cut to ``limit`` characters (a
    64-deep path is not printed 64 levels long)."""
    from judge.problems import field_path

    text = field_path(tuple(shown_path(p[:40]) if isinstance(p, str) else p for p in path))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def value_problem(value: Any) -> tuple[str, str] | None:
    """(field path, what is wrong) for the first value the boundary refuses in decoded data, or None. One
    iterative walk, memory in the depth only: nesting deeper than MAX_DEPTH, a key that is not text, a lone
    surrogate in a key or a string, a whole number beyond +-MAX_INT, a float that is not finite."""

    def leaf(v: Any) -> str | None:
        if isinstance(v, str):
            return surrogate_message(v) if SURROGATE.search(v) else None
        if isinstance(v, bool) or v is None:
            return None
        if isinstance(v, int):
            return None if -MAX_INT <= v <= MAX_INT else f"a number of about {int(v.bit_length() * 0.30103) + 1} digits, over the limit of {MAX_INT:,} (2**53)"
        if isinstance(v, float):
            return None if math.isfinite(v) else f"expected a finite number, found {v}"
        if isinstance(v, _TooManyDigits):
            return digits_message(v.digits)
        return None

    problem = leaf(value)
    if problem or not isinstance(value, (dict, list, tuple)):
        return ("", problem) if problem else None
    stack: list = [(isinstance(value, dict), _items(value))]
    keys: list = []
    while stack:
        is_dict, items = stack[-1]
        for key, item in items:
            if is_dict:
                if not isinstance(key, str):
                    return _field(tuple(keys)), f"expected text keys, found the key {str(key)[:40]!r} ({type(key).__name__})"
                if SURROGATE.search(key):
                    return _field(tuple(keys) + (key,)), "the key: " + surrogate_message(key)
            problem = leaf(item)
            if problem:
                return _field(tuple(keys) + (key,)), problem
            if isinstance(item, (dict, list, tuple)):
                if len(stack) >= MAX_DEPTH:
                    return _field(tuple(keys)), f"nested deeper than {MAX_DEPTH} levels; none of judge's inputs needs that"
                keys.append(key)
                stack.append((isinstance(item, dict), _items(item)))
                break
        else:
            stack.pop()
            if keys:
                keys.pop()
    return None


def _items(v):
    return iter(v.items()) if isinstance(v, dict) else enumerate(v)


def problem_of(value: Any, where: str, record: str | None = None, prefix: str = ""):
    """The Problem (naming ``where``, the record and the field) that :func:`value_problem` finds, or None."""
    found = value_problem(value)
    if found is None:
        return None
    from judge.problems import Problem

    field, message = found
    field = prefix + field if field.startswith("[") or not prefix else ".".join(p for p in (prefix, field) if p)
    return Problem(file=shown_path(where), record_id=record, field=field or None, message=message)


def check_value(value: Any, where: str, record: str | None = None, prefix: str = "") -> None:
    """Refuse ``value`` (DatasetError: one problem naming ``where``, the record and the field) when
    :func:`value_problem` finds something wrong in it."""
    problem = problem_of(value, where, record, prefix)
    if problem is not None:
        from judge.problems import DatasetError

        raise DatasetError([problem])


# -- YAML -------------------------------------------------------------------------------------------------


class YAMLLimit(Exception):
    """A YAML document over one of the limits; ``line``/``column`` where it was found (1-based)."""

    def __init__(self, message: str, mark=None):
        super().__init__(message)
        self.line = mark.line + 1 if mark is not None else None
        self.column = mark.column + 1 if mark is not None else None


def _loader():
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        """SafeLoader that counts depth and aliases while composing (before anything is built)."""

        def __init__(self, stream):
            super().__init__(stream)
            self._depth = 0
            self._aliases = 0

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                self._aliases += 1
                if self._aliases > MAX_ALIASES:
                    raise YAMLLimit(f"more than {MAX_ALIASES} aliases (*name); no config needs that many", self.peek_event().start_mark)
                return super().compose_node(parent, index)
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    raise YAMLLimit(f"nested deeper than {MAX_DEPTH} levels; no config needs that", self.peek_event().start_mark)
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def construct_mapping(self, node, deep=False):
            """A key written twice in one mapping is refused: YAML keeps the last value without a word (a
            second ``cache_dir:`` or ``judges:`` would silently win). Keys a merge (``<<``) brings may be overridden."""
            if isinstance(node, yaml.MappingNode):
                seen = set()
                for key, _ in node.value:
                    if key.tag == "tag:yaml.org,2002:merge" or not isinstance(key, yaml.ScalarNode):
                        continue
                    if (key.tag, key.value) in seen:
                        raise YAMLLimit(f"the key {key.value!r} appears twice in one mapping; the second value would silently "
                                        "replace the first (keep one)", key.start_mark)
                    seen.add((key.tag, key.value))
            return super().construct_mapping(node, deep=deep)

        def construct_yaml_int(self, node):
            """A whole number of thousands of digits is refused where it stands (int() would raise)."""
            if len(str(node.value)) > MAX_DIGITS:
                raise YAMLLimit(digits_message(len(str(node.value))), node.start_mark)
            return super().construct_yaml_int(node)

    BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
    return BoundedLoader


def _expanded(node) -> None:
    """Refuse a composed YAML graph whose aliases expand past MAX_YAML_NODES nodes or MAX_DEPTH levels, or
    refer to themselves. Linear in the distinct nodes (sizes are memoised per node)."""
    import yaml

    sizes: dict[int, tuple[int, int]] = {}
    busy: set[int] = set()
    # iterative post-order walk: (node, children iterator)
    def kids(n):
        if isinstance(n, yaml.SequenceNode):
            return iter(n.value)
        if isinstance(n, yaml.MappingNode):
            return iter([x for pair in n.value for x in pair])
        return iter(())

    stack = [(node, kids(node), 1, 1)]
    busy.add(id(node))
    while stack:
        n, it, size, depth = stack[-1]
        child = next(it, None)
        if child is None:
            stack.pop()
            busy.discard(id(n))
            sizes[id(n)] = (size, depth)
            if size > MAX_YAML_NODES:
                raise YAMLLimit(f"its aliases expand to more than {MAX_YAML_NODES:,} values (an alias bomb?)", n.start_mark)
            if depth > MAX_DEPTH:
                raise YAMLLimit(f"its aliases nest it deeper than {MAX_DEPTH} levels", n.start_mark)
            if stack:
                p, pit, psize, pdepth = stack[-1]
                stack[-1] = (p, pit, psize + size, max(pdepth, depth + 1))
            continue
        if id(child) in busy:
            raise YAMLLimit("an alias refers to a node that contains it (a recursive alias)", child.start_mark)
        if id(child) in sizes:
            csize, cdepth = sizes[id(child)]
            stack[-1] = (n, it, size + csize, max(depth, cdepth + 1))
            if size + csize > MAX_YAML_NODES:
                raise YAMLLimit(f"its aliases expand to more than {MAX_YAML_NODES:,} values (an alias bomb?)", child.start_mark)
            continue
        busy.add(id(child))
        stack.append((child, kids(child), 1, 1))


def parse_yaml(text: str, where: str) -> Any:
    """The data of one YAML document, bounded; YAMLLimit or yaml.YAMLError when it cannot be had."""
    loader = _loader()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


class ConfigFileError(InputError, ValueError):
    """A config file that cannot be read as YAML (missing, a directory, not UTF-8, not YAML); names the file."""


def read_yaml_file(path: Path, what: str) -> Any:
    """A YAML file's data through every limit, or a one-line InputError (ConfigFileError) naming the file:
    missing, a directory, too large, not UTF-8, not YAML (line and column), over a limit, or holding a value
    the boundary refuses (the field named)."""
    import yaml

    from judge.problems import DatasetError

    from judge.input_files import InputFileError, open_input

    shown = shown_path(path)
    try:
        with open_input(path) as f:  # a file, or a stream read once; every OS error one line
            data = f.read(MAX_YAML_BYTES + 1)
    except InputFileError as e:
        if e.reason == "does not exist":
            raise ConfigFileError(f"{what} {shown} does not exist") from None
        if e.reason.startswith("is a directory"):
            raise ConfigFileError(f"{shown}: is a directory, expected a {what} (YAML)") from None
        raise ConfigFileError(f"{shown}: cannot read the {what}: {e.reason.removeprefix('cannot read it: ')}") from None
    except OSError as e:  # a read that fails after the open (EIO)
        from judge.input_files import os_error_reason

        raise ConfigFileError(f"{shown}: cannot read the {what}: {os_error_reason(e).removeprefix('cannot read it: ')}") from None
    if len(data) > MAX_YAML_BYTES:
        raise ConfigFileError(f"{shown}: over {MAX_YAML_BYTES / 1e6:.0f} MB; a {what} is a few KB (is this the right file?)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigFileError(f"{shown}: not valid UTF-8 (byte {e.start}); save the {what} as UTF-8") from None
    try:
        value = parse_yaml(text, shown)
    except YAMLLimit as e:
        at = f" at line {e.line}, column {e.column}" if e.line is not None else ""
        raise ConfigFileError(f"{shown}: refused{at}: {e}") from None
    except yaml.YAMLError as e:  # one line: where and what, not the YAML library's multi-line picture
        mark = getattr(e, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigFileError(f"{shown}: not valid YAML{at}: {problem}") from None
    except RecursionError:  # pragma: no cover - the depth count stops this first
        raise ConfigFileError(f"{shown}: refused: nested deeper than {MAX_DEPTH} levels") from None
    try:
        check_value(value, shown)
    except DatasetError as e:
        raise ConfigFileError(str(e)) from None
    return value


# -- JSON ---------------------------------------------------------------------------------------------------


class DuplicateKey(Refused):
    """A JSON object that writes one key twice: JSON parsers keep the last value without a word, so the first
    (an answer, an id) would be dropped silently."""

    def __init__(self, key: str):
        super().__init__(f"the key {key!r} appears twice in one object; the second value would silently replace the first (keep one)")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """``object_pairs_hook`` for json.loads: the object, or DuplicateKey."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        raise DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return out


def loads(text: str) -> Any:
    """json.loads that refuses a key written twice in one object (DuplicateKey) and a number no file of ours
    holds (BadNumber, naming its field): NaN, Infinity, 1e999, 5,000 digits."""
    import json

    odd: list[bool] = []

    def whole(s: str):
        if len(s) > MAX_DIGITS:
            odd.append(True)
            return _TooManyDigits(len(s.lstrip("-")))
        return int(s)

    def real(s: str) -> float:
        v = float(s)
        if not math.isfinite(v):
            odd.append(True)
        return v

    def constant(s: str) -> float:
        odd.append(True)
        return float(s)

    value = json.loads(text, object_pairs_hook=unique_keys, parse_int=whole, parse_float=real, parse_constant=constant)
    if odd:
        field, message = value_problem(value) or ("", "a number out of range")
        raise BadNumber(message, field or None)
    return value


def parse_json(text: str | bytes, where: str, record: str | None = None) -> Any:
    """One JSON document or line through the limits (DatasetError naming ``where`` and ``record``): not
    UTF-8, malformed, nested deeper than MAX_DEPTH (a RecursionError never escapes), a lone surrogate, a
    number out of range."""
    import json

    from judge.problems import DatasetError, Problem

    def refuse(message: str, field: str | None = None):
        return DatasetError([Problem(file=shown_path(where), record_id=record, field=field, message=message)])

    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise refuse(f"not valid UTF-8 (byte {e.start}: {text[e.start:e.start + 4]!r})") from None
    try:
        value = loads(text)
    except json.JSONDecodeError as e:
        raise refuse(f"malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
    except Refused as e:
        raise refuse(str(e), e.field) from None
    except RecursionError:
        raise refuse(f"JSON nested deeper than {MAX_DEPTH} levels; none of judge's inputs needs that") from None
    check_value(value, where, record)
    return value


# -- Python values and command-line arguments ----------------------------------------------------------------


def check_text(where: str, value: Any) -> None:
    """A path or name given as an argument (of a command or an API function): text without a NUL byte (no
    file name holds one; ``runs_dir="r\\x00s"`` was a raw ValueError) and without lone surrogates."""
    if isinstance(value, (str, Path)):
        text = str(value)
        if "\0" in text:
            raise ArgumentError(f"{where} {shown_path(text.replace(chr(0), '<NUL>'))[:200]!r}: holds a NUL byte, which no path or name can hold")
        if SURROGATE.search(text):
            raise ArgumentError(f"{where} {shown_path(value)[:200]}: not valid UTF-8 text (a byte that is not UTF-8); rename it or pass another")


def check_argument(name: str, value: Any) -> None:
    """One command-line value (already parsed by typer): a number within +-MAX_FLAG and finite, text and paths
    without lone surrogates. BadInput-style InputError naming the flag."""
    flag = name if name.startswith("-") or name.isupper() else "--" + name.replace("_", "-")
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int) and not -MAX_FLAG <= value <= MAX_FLAG:
        raise ArgumentError(f"{flag}: a number of about {int(value.bit_length() * 0.30103) + 1} digits, over the limit of {MAX_FLAG:,}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ArgumentError(f"{flag}: expected a finite number, found {value}")
    check_text(flag, value)
    if isinstance(value, (list, tuple)):
        for item in value:
            check_argument(name, item)
