"""Exceptions raised by optnoise.

Every error about user input names the parameter, the offending value and what
is accepted, so that the CLI can print it as a one-line message and exit 2.
"""

from __future__ import annotations

from fractions import Fraction
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

    def renamed(self, parameter: str) -> "InvalidParameterError":
        """The same error (same class, value and what is accepted) naming ``parameter``: the
        flag, or the key path, the value came from."""
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.parameter = parameter
        Exception.__init__(new, new.message())
        return new

    def message(self, parameter: str | None = None, shown: str | None = None) -> str:
        """The one-line message, naming ``parameter`` (e.g. the CLI flag) instead of the
        Python parameter when given, and ``shown`` (e.g. the value as the user typed it)
        instead of the value when given."""
        name = parameter or self.parameter
        if self.value is None and shown is None:  # nothing given where something is needed
            return f"missing {name}; accepted: {one_line(self.accepted)}"
        text = show_value(self.value) if shown is None else shown
        return f"invalid {name}: {text}; accepted: {one_line(self.accepted)}"


class ResourceLimitError(InvalidParameterError):
    """The computation asked for would need more memory than allowed (CLI exit code 2).

    Raised *before* allocating, from an estimate (:mod:`optnoise.resources`).
    ``estimate`` and ``limit`` are bytes.
    """

    def __init__(self, parameter: str, value: Any, accepted: str, estimate: float, limit: int) -> None:
        self.estimate = estimate
        self.limit = limit
        super().__init__(parameter, value, accepted)


class TimeLimitError(InvalidParameterError):
    """The computation asked for would take longer than allowed (CLI exit code 2).

    Raised *before* starting, from an estimate (:mod:`optnoise.resources`): time is a
    resource like memory. ``estimate`` and ``limit`` are seconds.
    """

    def __init__(self, parameter: str, value: Any, accepted: str, estimate: float, limit: float) -> None:
        self.estimate = estimate
        self.limit = limit
        super().__init__(parameter, value, accepted)


#: Longest value echoed in a message (longer ones keep their start and end).
MAX_SHOWN = 80


def shorten(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` cut in the middle to at most about ``limit`` characters."""
    if len(text) <= limit:
        return text
    keep = limit - 20
    return f"{text[:keep]}...{text[-12:]} ({len(text)} characters)"


def one_line(text: str) -> str:
    """``text`` with line breaks and control characters escaped (messages are one line)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def _digits(n: int) -> int:
    return int(abs(n).bit_length() * 0.30103) + 1


def show_value(value: Any) -> str:
    """A value for a one-line message: short, on one line, never a 400-digit number.

    >>> show_value(None), show_value("x"), show_value(Fraction(1, 3)), show_value(10**400)
    ('nothing', "'x'", '0.333333333333333 (a fraction)', 'an integer of about 401 digits')
    """
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return show_value(value.numerator)
        try:
            return f"{float(value):.15g} (a fraction)"
        except OverflowError:
            return f"a fraction of about {_digits(value.numerator)} digits"
    if isinstance(value, int):
        if value.bit_length() > 256:
            return f"an integer of about {_digits(value)} digits"
        text = str(value)
        return text if len(text) <= 24 else f"{text[:17]}...{text[-4:]} ({len(text)} digits)"
    if isinstance(value, str):
        return shorten(repr(value))
    return shorten(one_line(repr(value)))


class DesignError(OptnoiseError):
    """A design problem could not be solved (infeasible, time limit; CLI exit 1)."""
