"""The project's own error type for refused input (no imports: the CLI's error boundary and ``judge --help``
load it for free)."""


class InputError(Exception):
    """Input that judge refuses: a config, a models file, a dataset, a flag, an environment value, a run
    directory, records or a dict given in Python. ``str()`` is one line per problem, naming the file, record
    and field. Every refusal of this kind (ConfigError, DatasetError, RunDirError, ...) is an InputError, and
    the CLI turns it into exit 2. Exported as ``judge.InputError``."""
