"""Versioned prompt templates (Jinja, in prompts/): each renders to chat messages, and each one's content
hash is recorded in every result and is part of every cache key, so editing a prompt invalidates exactly
the calls it made.

Source text, questions, answers and claims are data: the ``data`` filter escapes ``<``, ``>`` and ``&``
so that no text can close or fake the tags that delimit it, and the ``attr`` filter (every value inside a
tag's quotes) escapes quotes as well. Markers inside data are tags too (``<mark>``), which data cannot write.

A template is an input too (a user's answer variant, reviewed in a pull request; a JUDGE_PROMPTS_DIR): every
one renders in Jinja's immutable sandbox, so ``{{ cycler.__init__.__globals__.os.popen('id').read() }}``
reaches no Python internals and runs nothing: it is refused in one line naming the template file
(:class:`PromptError`), when the config is loaded or, for a template that hides it behind a condition, when
it renders.
"""

from __future__ import annotations

import hashlib
import html
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from judge.errors import InputError
from judge.resources import shipped_dir

PROMPTS_DIR = Path(os.environ.get("JUDGE_PROMPTS_DIR") or shipped_dir("prompts"))


def escape_data(text: str) -> str:
    """Element text: ``<``, ``>``, ``&`` escaped, so data can neither close a tag nor open one (nor a
    ``<mark>``). Quotes are kept: they cannot end anything here, and a quote the model must copy back
    (a decomposer's quote, Hebrew gershayim as in צה"ל) stays the text it is in the answer."""
    return html.escape(str(text), quote=False)


def escape_attribute(text: str) -> str:
    """An attribute value (an id): quotes escaped too, so a value cannot end itself and add attributes."""
    return html.escape(str(text), quote=True)


class PromptError(InputError, ValueError):
    """A template that reached for something the sandbox forbids, or failed to render: one line naming its
    file. ``reason``: the line without the file; ``__cause__``: the error it came from."""

    def __init__(self, path: Path, reason: str):
        self.path, self.reason = path, reason
        super().__init__(f"prompt template {path}: {reason}")


_SANDBOX = "templates render in a sandbox: they read their variables, never Python internals"


@dataclass(frozen=True)
class Prompt:
    name: str
    path: Path
    hash: str  # sha256 of the template file, first 16 hex digits

    def render(self, **context) -> list[dict]:
        """Chat messages: the template's ``system`` block, then its ``user`` block. PromptError naming the file
        when a block reaches past the sandbox or fails (a template may hide either behind a condition that
        only a real record meets, so this holds at run time too, never a traceback)."""
        import jinja2
        from jinja2.exceptions import SecurityError

        from judge.text.language import language_name

        if isinstance(context.get("language"), str):  # a code ("he"): templates write the language's name
            context["language"] = language_name(context["language"])
        template = _environment(str(self.path.parent)).get_template(self.path.name)
        ctx = template.new_context(context)
        messages = []
        for role in ("system", "user"):
            if role in template.blocks:
                try:
                    text = "".join(template.blocks[role](ctx)).strip()
                except SecurityError as e:
                    raise PromptError(self.path, f"refused: {_first_line(e)} ({_SANDBOX})") from e
                except jinja2.UndefinedError as e:
                    raise PromptError(self.path, e.message or "an undefined variable") from e
                except Exception as e:  # a template's own failure ({{ 1/0 }}, a filter given the wrong arguments)
                    raise PromptError(self.path, f"cannot render its {role} block: {type(e).__name__}: {_first_line(e)}") from e
                if text:
                    messages.append({"role": role, "content": text})
        return messages


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else type(e).__name__


TEMPLATE_SUFFIXES = (".j2", ".jinja", ".jinja2")  # what a template may include, import or extend


@lru_cache(maxsize=4)
def _environment(directory: str):
    """The one Jinja environment every template renders in: sandboxed (no attribute starting with ``_``, no
    function internals, no mutation of a value passed in), never a plain ``jinja2.Environment``. A template
    includes, imports or extends only templates of its own folder (``*.j2``): never ``.env`` or a data file
    beside it, whose text would go to a provider in the prompt."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Sandbox(ImmutableSandboxedEnvironment):
        def join_path(self, template, parent):
            name = str(template)
            if not name.endswith(TEMPLATE_SUFFIXES) or any(part.startswith(".") for part in name.replace("\\", "/").split("/")):
                raise jinja2.TemplateNotFound(f"{name[:80]} (a template includes only templates, {', '.join(TEMPLATE_SUFFIXES)}, of its own folder)")
            return name

    env = Sandbox(
        loader=jinja2.FileSystemLoader(directory),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["data"] = escape_data
    env.filters["attr"] = escape_attribute
    return env


def load_prompt(name: str, directory: Path | None = None) -> Prompt:
    path = (directory or PROMPTS_DIR) / f"{name}.j2"
    if not path.exists():
        raise FileNotFoundError(f"prompt template {path} does not exist")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return Prompt(name=name, path=path, hash=f"{name}@{digest}")


# What an answer prompt (prompts/answer.j2, or a user's variant under generate.prompts) is rendered with.
ANSWER_VARIABLES = {
    "question": "the record's question (text; pass it through | data)",
    "sources": "the record's sources, a list of objects with doc_id, title (or none) and text (| data, ids | attr)",
    "language": "the language detected from the question and first source, in English (e.g. Hebrew)",
}


def load_answer_variant(variant: str, path: str | Path) -> Prompt:
    """A user's answer prompt (``generate.prompts: {variant: path}``): a Jinja template with a ``user`` block
    (and usually a ``system`` block), rendered with ANSWER_VARIABLES and the ``data``/``attr`` filters. Its
    hash (of the file's bytes) goes into every answer it produced and into the cache key of every call.

    Raises ValueError naming the file and the problem when the template does not render on a sample record
    (a syntax error, an unknown variable, no ``user`` block)."""
    import jinja2

    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ValueError(f"prompts.{variant}: {path}: cannot read it ({e.strerror or type(e).__name__})") from None
    prompt = Prompt(name=f"answer:{variant}", path=path, hash=f"{variant}@{hashlib.sha256(data).hexdigest()[:16]}")
    sample = [_SampleSource("doc-1", "A title", "A source text.")]
    try:
        template = _environment(str(path.parent)).get_template(path.name)
        if "user" not in template.blocks:
            raise ValueError("it has no {% block user %} (the question and sources go there; {% block system %} is optional)")
        messages = prompt.render(sources=sample, question="A question?", language="English")
    except jinja2.TemplateSyntaxError as e:
        raise ValueError(f"prompts.{variant}: {path}, line {e.lineno}: {e.message}") from None
    except PromptError as e:
        extra = f"; the variables are {', '.join(ANSWER_VARIABLES)}" if isinstance(e.__cause__, jinja2.UndefinedError) else ""
        raise ValueError(f"prompts.{variant}: {path}: {e.reason}{extra}") from None
    except jinja2.TemplateError as e:
        raise ValueError(f"prompts.{variant}: {path}: {_first_line(e)}") from None
    except ValueError as e:
        raise ValueError(f"prompts.{variant}: {path}: {e}") from None
    if not any(m["role"] == "user" for m in messages):
        raise ValueError(f"prompts.{variant}: {path}: its user block renders empty")
    return prompt


@dataclass(frozen=True)
class _SampleSource:
    doc_id: str
    title: str | None
    text: str
