"""The doc tests use the suite's dev server, started only when a page needs it."""

from __future__ import annotations

from ..integration.conftest import dev_server

__all__ = ["dev_server"]
