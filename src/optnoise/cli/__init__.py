"""The ``optnoise`` command line: thin commands over the library (contract: docs/cli.md).

Exit codes: 0 success, 2 bad input (the message names the flag, the value and what is
accepted), 1 other failures. ``--json`` prints exactly one JSON object on stdout;
messages go to stderr. Each command collects its options (:mod:`.options`), calls one
library function and renders the result (:mod:`.render`).
"""

from . import commands  # noqa: F401  (registers the commands on the app)
from .app import app, main

__all__ = ["app", "main"]
