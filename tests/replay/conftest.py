"""Replay tests reuse the integration fixtures to record fresh histories on demand."""

from __future__ import annotations

from ..integration.conftest import dev_server, run_worker, temporal_client

__all__ = ["dev_server", "run_worker", "temporal_client"]
