"""Optional dependencies: the extras of ``adk-temporal`` and the error when one is missing.

A module that needs an extra imports it inside :func:`needs_extra`, so every missing extra
fails the same way — naming what needed it and the command that installs it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .errors import AdkRequestError

__all__ = ["MissingExtraError", "needs_extra"]


class MissingExtraError(AdkRequestError, ImportError):
    """An optional dependency of adk-temporal is not installed."""


@contextlib.contextmanager
def needs_extra(extra: str, what: str) -> Iterator[None]:
    """Imports in this block come from the extra ``extra``, which ``what`` needs.

    Raises:
        MissingExtraError: An import failed; the message names the missing module and
            ``pip install 'adk-temporal[extra]'``.
    """
    try:
        yield
    except ImportError as err:
        raise MissingExtraError(
            f"{what} needs the {extra} extra ({err.name or err} is missing): "
            f"pip install 'adk-temporal[{extra}]'"
        ) from err
