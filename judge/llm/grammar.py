"""The grammar an embedded model decodes under, built from the response schema of the call (docs/reliability.md).

llama.cpp samples only tokens its grammar allows, so an embedded reply always parses. On top of llama.cpp's own
converter: every array is bounded (an array of enum values holds each at most once, in enum order, so a small
model that repeats one id cannot loop until max_tokens); an array of one item per enum value lists them one
each; strings hold no raw control characters; a schema that cannot be converted is an error, never a silent
"any JSON". String length bounds are dropped from the GBNF grammar (llama.cpp expands ``maxLength`` into one
rule per character); instructor still enforces them. ``gbnf`` imports llama_cpp, so it runs in the embedded
model's child process (judge/llm/local_worker.py), never in the parent that must survive a native crash.
"""

from __future__ import annotations

import json
from typing import Any

DEFAULT_MAX_ITEMS = 64
# llama.cpp's "char" rule with the C0 controls taken out of the unescaped characters.
_CHAR = r'[^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])'


# An embedded model's rationale, at most this many characters: on 2 cores each token of it costs a judge call
# about 0.15 s, and a 1.5B model's long rationales were most of a call (348 of 1,118 tokens). Decoded under
# llama.cpp's JSON-schema sampler (xllamacpp), where a length bound costs nothing.
EMBEDDED_RATIONALE_CHARS = 64


def grammar_schema(schema: Any, root: Any = None, *, lengths: bool = False) -> Any:
    """The schema as the grammar sees it: arrays bounded, one-item-per-value arrays spelt out (``prefixItems``);
    string lengths dropped, or kept with ``lengths`` (a rationale's capped) for llama.cpp's sampler."""
    root = schema if root is None else root
    if isinstance(schema, list):
        return [grammar_schema(v, root, lengths=lengths) for v in schema]
    if not isinstance(schema, dict):
        return schema
    dropped = () if lengths else ("maxLength", "minLength")
    out = {k: grammar_schema(v, root, lengths=lengths) for k, v in schema.items() if k not in dropped}
    rationale = (out.get("properties") or {}).get("rationale") if lengths else None
    if isinstance(rationale, dict) and rationale.get("type") == "string":
        cap = min(int(rationale.get("maxLength", EMBEDDED_RATIONALE_CHARS)), EMBEDDED_RATIONALE_CHARS)
        out["properties"] = {**out["properties"], "rationale": {**rationale, "maxLength": cap}}
    if isinstance(out.get("properties"), dict) and out["properties"]:
        out["required"] = list(out["properties"])  # every field written (a defaulted one too: evidence, rationale)
    if out.get("type") == "array" or "items" in out:
        if not isinstance(out.get("maxItems"), int):
            out["maxItems"] = DEFAULT_MAX_ITEMS
        out["maxItems"] = max(out["maxItems"], int(out.get("minItems", 0) or 0))
        spelt = _one_per_key(out, root, lengths)
        if spelt is not None:
            out = {k: v for k, v in out.items() if k != "items"} | {"prefixItems": spelt}
    return out


def _local(node: Any, root: Any) -> Any:
    """``node`` with a local ``$ref`` (``#/$defs/Name``) followed, once."""
    ref = node.get("$ref") if isinstance(node, dict) else None
    if isinstance(ref, str) and ref.startswith("#/"):
        target = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return target
    return node


def _one_per_key(array: dict, root: Any, lengths: bool = False) -> list[dict] | None:
    """The items of an array of exactly n objects whose required key is an enum of n values, one per value in
    enum order; None for any other array."""
    n = array.get("minItems")
    if not isinstance(n, int) or n < 1 or array.get("maxItems") != n:
        return None
    item = _local(array.get("items"), root)
    if not isinstance(item, dict) or not isinstance(item.get("properties"), dict):
        return None
    for key in item.get("required", []):
        values = _local(item["properties"].get(key), root)
        values = values.get("enum") if isinstance(values, dict) else None
        if isinstance(values, list) and len(values) == n == len({json.dumps(v) for v in values}):
            properties = item["properties"]
            return [
                grammar_schema({**item, "properties": {k: ({"const": v} if k == key else p) for k, p in properties.items()}}, root,
                               lengths=lengths)
                for v in values
            ]
    return None


def _converter_class():
    from llama_cpp import llama_grammar as lg

    class BoundedConverter(lg.SchemaConverter):
        def visit(self, schema, name):
            items = schema.get("items") if isinstance(schema, dict) else None
            if isinstance(items, dict) and "$ref" in items:
                items = self._refs.get(items["$ref"], items)
            if (
                isinstance(items, dict)
                and isinstance(items.get("enum"), list)
                and items["enum"]
                and schema.get("type") in (None, "array")
                and not schema.get("minItems")
            ):
                return self._unique_enum_array(schema, name, items["enum"])
            return super().visit(schema, name)

        def _unique_enum_array(self, schema, name, values):
            """``[]`` or the values in enum order, each at most once, at most ``maxItems`` of them.

            pick-j-k: value j, then optionally ``,`` and a later value with at most k-1 more to come;
            from-j-k: a pick of value j or of any later one."""
            values = list(dict.fromkeys(json.dumps(v) for v in values))
            n = len(values)
            k_max = min(int(schema.get("maxItems", n)), n)
            base = f"{name}{'-' if name else ''}uniq"
            lits = [self._add_rule(f"{base}-v{j}", self._format_literal(v)) for j, v in enumerate(values)]
            from_rule: dict[tuple[int, int], str] = {}
            for k in range(1, k_max + 1):
                for j in range(n - 1, -1, -1):
                    pick = lits[j]
                    if k > 1 and j + 1 < n:
                        pick += f' ("," space {from_rule[(j + 1, k - 1)]})?'
                    alt = pick if j + 1 >= n else f"{pick} | {from_rule[(j + 1, k)]}"
                    from_rule[(j, k)] = self._add_rule(f"{base}-from{j}-{k}", f"( {alt} )")
            body = f"{from_rule[(0, k_max)]}?" if k_max else ""
            rule_name = name + "-" if name in lg.RESERVED_NAMES else name or "root"
            return self._add_rule(rule_name, f'"[" space {body} "]" space')

    return BoundedConverter


def gbnf(schema: dict) -> str:
    """The GBNF grammar for ``schema`` (see the module's docstring); raises where it cannot build one."""
    converter = _converter_class()(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    converter._rules["char"] = _CHAR  # before the visit: "string" refers to it, and a rule is added once
    bounded = converter.resolve_refs(grammar_schema(schema), "input")
    converter.visit(bounded, "")
    return converter.format_grammar()
