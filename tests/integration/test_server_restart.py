"""The Temporal server itself restarts while an invocation waits for approval."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from temporalio.client import Client

from adk_temporal.client import AdkClient
from adk_temporal.devserver import DevServer
from adk_temporal.examples.weather import APP_NAME
from adk_temporal.plugin import adk_data_converter

from .conftest import FAST_POLL
from .workers import Deployment, worker_process

pytestmark = pytest.mark.integration


async def test_pause_survives_a_server_restart_and_approval_completes_it(
    tmp_path: Path,
) -> None:
    """Stop and restart the dev server on its SQLite file mid-pause; approving then finishes."""
    server = DevServer(
        db_filename=tmp_path / "temporal.db",
        headless=True,
        dynamic_config=FAST_POLL,
        log_path=tmp_path / "server.log",
    )
    with server:
        deployment = Deployment(server.address, "restart", tmp_path / "data")
        with worker_process(deployment):
            client = await Client.connect(server.address, data_converter=adk_data_converter())
            adk = AdkClient(client, task_queue=deployment.task_queue)
            handle = await adk.start(
                APP_NAME, "u-1", "s-restart", "weather_agent", "Buy a weather report for Oslo"
            )
            await handle.wait_for_status("awaiting_confirmation", timeout=30)
            [before] = await handle.pending()

            await asyncio.to_thread(server.stop)
            assert not server.running
            await asyncio.to_thread(server.start)

            # The same client and worker reconnect on their own; the pause is still there.
            status = await handle.wait_for_status("awaiting_confirmation", timeout=60)
            [after] = await handle.pending()
            assert after == before
            assert status.step == 1
            await handle.confirm(after.id, True)
            result = await asyncio.wait_for(handle.result(), timeout=60)
    assert result.status == "completed"
    assert "report.txt" in result.final_text
    assert len(deployment.payments.charges()) == 1
