"""The typer app and the one error boundary: every command is registered through :func:`command`, which
turns a failure into one plain line (or one line per problem) on stderr and the exit code of the contract:
0 ok; 1 a gate failed; 2 the input, config or environment is wrong (a model that cannot be called included,
refused before the first record); 3 the run finished and wrote everything, but cannot pass: too many claims
ended in judge_error (max_error_rate), a stage failed for every record, nothing was judged, or a judge
that failed or could not be verified on its control claims; 130 interrupted."""

from __future__ import annotations

import functools
import sys

import typer

from judge.errors import EXIT_BAD_INPUT, EXIT_GATE, EXIT_INTERRUPTED, BadInput, GateFailed, InputError, JudgesFailed
from judge.errors import EXIT_FAILED as EXIT_JUDGES_FAILED

__all__ = ["EXIT_BAD_INPUT", "EXIT_GATE", "EXIT_INTERRUPTED", "EXIT_JUDGES_FAILED", "BadInput", "GateFailed", "JudgesFailed", "app", "command", "fail"]

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Grounding evaluator for LLM answers.")


def _version(value: bool) -> None:
    if value:
        from judge import __version__

        sys.stdout.write(f"judge {__version__}\n")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit.")) -> None:
    """Grounding evaluator for LLM answers."""


def _bad_input_errors() -> tuple[type[BaseException], ...]:
    """What means exit 2 (judge.errors.EXIT_CODES), OSError aside: it has a handler of its own below."""
    from judge.errors import classes_with

    return tuple(c for c in classes_with(EXIT_BAD_INPUT) if c is not OSError)


def fail(message: str, code: int = EXIT_BAD_INPUT):
    """Stop the command with one line on stderr."""
    from judge.text.control import defuse  # data in a message never drives the terminal

    sys.stderr.write(defuse(message) + "\n")
    raise typer.Exit(code)


class _MaskedStream:
    """stdout or stderr with every fragment of a configured key masked as it is written (tables, JSON, error
    lines, warnings, the progress bar: all of them write through sys.stdout or sys.stderr)."""

    def __init__(self, inner):
        self._inner = inner
        self._gone = False

    def _write(self, text):
        """Write, unless the reader has gone (``judge run ... | head -c 10``): then the rest of the output is
        dropped and the command goes on to its own exit code; a closed pipe is no failed gate."""
        if self._gone:
            return len(text)
        try:
            return self._inner.write(text)
        except (BrokenPipeError, ValueError):  # ValueError: the stream itself was closed
            self._gone = True
            _drop_output(self._inner)
            return len(text)

    def write(self, text):
        from judge.redact import redact_secrets

        return self._write(redact_secrets(text) if isinstance(text, str) else text)

    def write_json(self, text: str):
        """JSON text masked in its string values only, so that ``--json`` output stays parseable."""
        from judge.redact import redact_json_text

        return self._write(redact_json_text(text))

    def flush(self):
        if self._gone:
            return None
        try:
            return self._inner.flush()
        except (BrokenPipeError, ValueError):
            self._gone = True
            _drop_output(self._inner)

    def __getattr__(self, name):
        return getattr(self._inner, name)

    @classmethod
    def install(cls) -> tuple:
        before = (sys.stdout, sys.stderr)
        sys.stdout, sys.stderr = cls(sys.stdout), cls(sys.stderr)
        return before

    @staticmethod
    def remove(before: tuple) -> None:
        sys.stdout, sys.stderr = before


def _drop_output(stream) -> None:
    """Point a stream whose reader has gone at /dev/null, so that what is still buffered, and the flush at
    exit, go nowhere instead of raising BrokenPipeError again (Python's own advice for SIGPIPE)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no file descriptor (a test's captured stream)
        pass


def _argument_names(fn) -> dict[str, str]:
    """How the user spells each parameter of a command: its first long option (--limit), or its metavar in
    upper case (CONFIG) for an argument."""
    import inspect

    out = {}
    for key, param in inspect.signature(fn).parameters.items():
        decls = [d for d in getattr(param.default, "param_decls", None) or () if d.startswith("--")]
        out[key] = decls[0].split("/")[0] if decls else key.upper()
    return out


def command(name: str | None = None, *, also: tuple[type[Exception], ...] = ()):
    """Register a command behind the error boundary. ``also``: more exception types that mean bad input for
    this command (anything else is a bug, and shows its traceback)."""

    def register(fn):
        names = _argument_names(fn)

        @functools.wraps(fn)
        def bounded(*args, **kwargs):
            from judge import env
            from judge.boundary import check_argument
            from judge.problems import DatasetError
            from judge.text.control import defuse

            masked = _MaskedStream.install()  # no key, in any form, reaches the terminal (judge.redact)
            try:
                for warning in env.check():  # a bad JUDGE_* value: refused before any work
                    sys.stderr.write(defuse(warning) + "\n")
                for key, value in kwargs.items():  # numbers bounded, text and paths that are text: before any work
                    check_argument(names.get(key, key), value)
                return fn(*args, **kwargs)
            except typer.Exit:
                raise
            except GateFailed:
                raise typer.Exit(EXIT_GATE)
            except JudgesFailed as e:
                fail(str(e), EXIT_JUDGES_FAILED)
            except KeyboardInterrupt:
                fail("interrupted: a run keeps every finished record; finish it with --resume RUN_DIR", EXIT_INTERRUPTED)
            except DatasetError as e:
                for p in e.problems:
                    sys.stderr.write(defuse(f"{p}") + "\n")
                raise typer.Exit(EXIT_BAD_INPUT)
            except _bad_input_errors() + also as e:
                if isinstance(e, OSError) and not isinstance(e, InputError) and e.errno is not None:
                    from judge.input_files import describe_os_error

                    fail(describe_os_error(e))
                fail(str(e))
            except OSError as e:  # a name too long, a link loop, EIO, a full disk: one line naming the path, never a traceback
                from judge.input_files import describe_os_error

                fail(describe_os_error(e))
            except RuntimeError as e:  # Path.resolve() on a link loop (Python < 3.13 raises this, not OSError)
                if not str(e).startswith("Symlink loop from "):
                    raise
                fail(f"{str(e).removeprefix('Symlink loop from ')}: is a loop of symbolic links")
            finally:
                _MaskedStream.remove(masked)
                from judge.input_files import forget_streams

                forget_streams()

        return app.command(name)(bounded)

    return register


def main() -> None:
    """The console script: the app, then stdout flushed with a reader that has gone treated as above (the exit
    code stays the command's: ``judge run ... | head -c 10`` is no failed gate)."""
    import os

    for name in ("stdout", "stderr"):  # a stream closed by the shell (2>&-): written to /dev/null, not crashed on
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w"))
    code = 0
    try:
        app()
    except SystemExit as e:
        code = e.code
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):
            _drop_output(stream)
    sys.exit(code)
