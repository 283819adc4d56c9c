"""The calendar's one error type, and how tools hand it to the model."""

from collections.abc import Iterator
from contextlib import contextmanager

from ..toolkit import ToolError


class CalendarError(ValueError):
    """Bad input for a calendar operation; tools turn it into a `ToolError` with the same text."""


@contextmanager
def tool_errors() -> Iterator[None]:
    """Turn a `CalendarError` raised inside into the `ToolError` the model reads."""
    try:
        yield
    except CalendarError as exc:
        raise ToolError(str(exc)) from None
