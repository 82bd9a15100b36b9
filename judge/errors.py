"""Every exception a caller of judge can meet, and the exit code each one means: the one place for both. The
codes are the contract with CI (DESIGN.md "Exit codes"): 0 finished and every gate passed; 1 a gate failed;
2 the input, config or environment is wrong (refused before any record); 3 the run finished but cannot pass;
130 interrupted. The CLI's one error boundary (judge.cli.app.command) reads them from ``EXIT_CODES``.

The base of refused input (``InputError``) and the CLI's own outcomes are defined here; every other class is
defined beside the code that raises it and named in ``EXIT_CODES`` (tests/test_house.py checks that every
exception class in judge/ is). No imports: the error boundary and ``judge --help`` load this for free."""

EXIT_OK = 0
EXIT_GATE = 1
EXIT_BAD_INPUT = 2
EXIT_FAILED = 3
EXIT_INTERRUPTED = 130


class InputError(Exception):
    """Input that judge refuses: a config, a models file, a dataset, a flag, an environment value, a run
    directory, records or a dict given in Python. ``str()`` is one line per problem, naming the file, record
    and field. Every refusal of this kind (ConfigError, DatasetError, RunDirError, ...) is an InputError, and
    the CLI turns it into exit 2. Exported as ``judge.InputError``."""


class BadInput(InputError, ValueError):
    """A command-line argument that cannot be used (exit 2)."""


class GateFailed(Exception):
    """A regression gate failed (exit 1); the command has already printed why."""


class JudgesFailed(Exception):
    """The run finished but cannot pass (exit 3): judge errors, a failed stage, or a judge failing its controls;
    the message says which and why."""


# Every exception class of judge (module.Class), with the exit code it ends a command with when it reaches the
# CLI's boundary; None: it never does (caught where it is raised and turned into one of the others, or not a
# command's: the pytest plugin's failure). A subclass takes its base's code unless listed with its own.
EXIT_CODES: dict[str, int | None] = {
    # refused input: one line per problem, exit 2 (every one an InputError)
    "judge.errors.InputError": EXIT_BAD_INPUT,
    "judge.errors.BadInput": EXIT_BAD_INPUT,
    "judge.boundary.ArgumentError": EXIT_BAD_INPUT,
    "judge.boundary.ConfigFileError": EXIT_BAD_INPUT,
    "judge.config.ConfigError": EXIT_BAD_INPUT,
    "judge.files.UnsafePath": EXIT_BAD_INPUT,
    "judge.input_files.InputFileError": EXIT_BAD_INPUT,
    "judge.problems.DatasetError": EXIT_BAD_INPUT,  # one line per problem of the file
    "judge.prompts.PromptError": EXIT_BAD_INPUT,
    "judge.runs.reading.RunDirError": EXIT_BAD_INPUT,
    "judge.llm.families.SameFamilyError": EXIT_BAD_INPUT,
    "judge.llm.families.UnknownFamilyError": EXIT_BAD_INPUT,
    "judge.labels.sample.SampleError": EXIT_BAD_INPUT,  # a sheet that cannot be drawn from the run
    "judge.judges.stored.ForgedPassage": EXIT_BAD_INPUT,  # a stored passage that does not slice its source
    # the environment: a model or Ray that cannot be reached, a file that is not there, exit 2
    "judge.llm.errors.LLMError": EXIT_BAD_INPUT,
    "judge.llm.errors.LLMCallError": EXIT_BAD_INPUT,  # in a run it is a claim's judge_error, never a crash
    "judge.llm.errors.BudgetExceeded": EXIT_BAD_INPUT,
    "judge.llm.errors.LocalModelUnavailable": EXIT_BAD_INPUT,
    "judge.llm.errors.LocalModelCrashed": EXIT_BAD_INPUT,
    "judge.llm.errors.LocalModelTimeout": EXIT_BAD_INPUT,
    "judge.llm.preflight.ModelsUnavailable": EXIT_BAD_INPUT,
    "judge.raylib.RayUnavailable": EXIT_BAD_INPUT,
    "builtins.FileNotFoundError": EXIT_BAD_INPUT,
    "builtins.OSError": EXIT_BAD_INPUT,  # a name too long, a link loop, EIO, a full disk: one line naming the path
    # outcomes
    "judge.errors.GateFailed": EXIT_GATE,
    "judge.errors.JudgesFailed": EXIT_FAILED,
    "builtins.KeyboardInterrupt": EXIT_INTERRUPTED,
    # never reach the boundary
    "judge.numeric.Refused": None,  # JSON judge refuses: the reader turns it into an InputError naming the field
    "judge.numeric.BadNumber": None,
    "judge.boundary.DuplicateKey": None,
    "judge.boundary.YAMLLimit": None,  # -> ConfigFileError, with its line and column
    "judge.datasets.base._Stop": None,  # control flow inside a reader
    "judge.llm.port._Retryable": None,  # a call retried; after the last try an LLMCallError
    "judge.llm.weights._Stopped": None,  # a download stopped on purpose
    "judge.pytest_plugin.GroundingError": None,  # a failed assertion in the user's own pytest run
}


def exit_code(error: BaseException) -> int | None:
    """The exit code ``error`` ends a command with (its class's, or its nearest listed base's); None: a bug."""
    for cls in type(error).__mro__:
        name = f"{cls.__module__}.{cls.__qualname__}"
        if name in EXIT_CODES:
            return EXIT_CODES[name]
    return None


def classes_with(code: int) -> tuple[type[BaseException], ...]:
    """The listed classes that mean ``code``, from the modules already imported (a class whose module was never
    imported cannot have been raised), for an ``except`` clause."""
    import sys

    out = []
    for name, c in EXIT_CODES.items():
        module, _, cls = name.rpartition(".")
        if c == code and module in sys.modules:
            out.append(getattr(sys.modules[module], cls))
    return tuple(out)
