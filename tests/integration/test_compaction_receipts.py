"""Compaction receipts and redacted summaries on Temporal, read back with the CLI.

A worker compacts every two invocations with a summarizer that repeats what it reads and
masks card numbers through ``App.on_event``. After four turns (a card in the third), no
stored summary holds the card; ``adk-temporal show --compactions`` lists each compaction
with its range, tokens and receipt checked, and ``adk-temporal check-compactions`` passes —
until a folded event is edited in the store, when it exits 1 naming the compaction.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from adk_temporal.agents import Agent
from adk_temporal.compaction import EventsCompactionConfig
from adk_temporal.devserver import DevServer
from adk_temporal.ids import SessionKey, workflow_id_for
from adk_temporal.models import ModelRegistry
from adk_temporal.summarizers import FunctionSummarizer

from ..commands import adk_command, offline_env
from ..compaction_app import CARD, EchoModel, mask_cards
from .conftest import WorkerFactory

pytestmark = pytest.mark.integration


def _cli(server: DevServer, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*adk_command(), *args, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**offline_env(), "TEMPORAL_ADDRESS": server.address},
        stdin=subprocess.DEVNULL,
    )


async def test_receipts_are_listed_checked_and_catch_an_edited_event(
    run_worker: WorkerFactory, temporal_client: Client, dev_server: DevServer, tmp_path: Path
) -> None:
    """Four turns on Temporal: summaries hold no card, show --compactions lists receipts
    that check, check-compactions passes, then fails once a folded event is edited."""
    models = ModelRegistry()
    models.register("echo", lambda _name: EchoModel())
    models.register("verbatim", lambda name: FunctionSummarizer(name, lambda t: f"S {t[-300:]}"))
    config = EventsCompactionConfig(compaction_interval=2, summarizer_model="verbatim")
    key = SessionKey("receipts", "u-1", f"s-{uuid.uuid4().hex[:8]}")
    agent = Agent(name="echoer", model="echo")
    async with run_worker(
        [agent], models=models, events_compaction_config=config, on_event=[mask_cards]
    ) as rt:
        for message in ("one", "two", f"card {CARD}", "four"):
            handle = await rt.adk.start(*key, "echoer", message)
            assert (await handle.result()).status == "completed"
        stored = (await rt.sessions.get(key)).events
    summaries = [e.actions.compaction for e in stored if e.actions.compaction]
    assert len(summaries) == 2
    assert CARD not in json.dumps([s.model_dump(mode="json") for s in summaries if s])
    workflow_id = workflow_id_for(key)
    shown = _cli(dev_server, tmp_path, "show", workflow_id, "--compactions", "--json")
    assert shown.returncode == 0, shown.stderr
    listed = json.loads(shown.stdout)["compactions"]
    assert [c["ok"] for c in listed] == [True, True]
    assert all(c["receipt"]["event_count"] == c["event_count"] > 0 for c in listed)
    assert _cli(dev_server, tmp_path, "check-compactions", workflow_id).returncode == 0
    with sqlite3.connect(tmp_path / "sessions.db") as conn:
        conn.execute(
            "UPDATE events SET event_json = replace(event_json, '\"one\"', '\"uno\"') "
            "WHERE event_id = ?",
            (stored[0].id,),
        )
    failed = _cli(dev_server, tmp_path, "check-compactions", workflow_id)
    assert failed.returncode == 1 and "receipt mismatch" in failed.stderr, failed.stderr
    assert listed[0]["event_id"] in failed.stderr
