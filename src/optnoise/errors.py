"""Exceptions raised by optnoise.

Every error about user input names the parameter, the offending value and what
is accepted, so that the CLI can print it as a one-line message and exit 2.
"""

from __future__ import annotations

from typing import Any


class OptnoiseError(Exception):
    """Base class of every error raised on purpose by optnoise."""


class InvalidParameterError(OptnoiseError, ValueError):
    """A parameter has a value that is not accepted (CLI exit code 2).

    Parameters
    ----------
    parameter:
        Name of the Python parameter (``"epsilon"``, ``"pmf"``...); the command line
        maps it to the flag the user typed.
    value:
        The value that was given.
    accepted:
        What would have been accepted, in words.
    """

    def __init__(self, parameter: str, value: Any, accepted: str) -> None:
        self.parameter = parameter
        self.value = value
        self.accepted = accepted
        super().__init__(self.message())

    def message(self, parameter: str | None = None) -> str:
        """The one-line message, naming ``parameter`` (e.g. the CLI flag) instead of the
        Python parameter when given."""
        shown = repr(self.value)
        if len(shown) > 120:
            shown = shown[:117] + "..."
        return f"invalid {parameter or self.parameter}: {shown}; accepted: {self.accepted}"


class DesignError(OptnoiseError):
    """A design problem could not be solved (infeasible, time limit; CLI exit 1)."""
