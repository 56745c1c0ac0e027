"""The ``optnoise`` command line: thin commands over the library (contract: docs/cli.md).

Exit codes: 0 success, 2 bad input (the message names the flag, the value and what is
accepted), 1 other failures, 130 interrupted. ``--json`` prints exactly one JSON object
on stdout; messages go to stderr. Each command collects its options (:mod:`.options`),
calls one library function and renders the result (:mod:`.render`).

The imports below run inside a Ctrl-C handler: an interrupt while the console script
starts up also ends with one line and exit code 130 (the root command handles the rest,
:class:`.app.OptnoiseGroup`).
"""

import sys

try:
    from . import commands  # noqa: F401  (registers the commands on the app)
    from .app import app, main
except KeyboardInterrupt:  # pragma: no cover - timing-dependent
    sys.stderr.write("error: interrupted\n")
    sys.exit(130)

__all__ = ["app", "main"]
