"""Approval policies from the command line, against a real worker: claims, the inbox, votes
with ``--as``/``--group``, ``confirm --all``, standing grants given, listed and revoked,
``show`` naming who answered, ``audit`` listing it all."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from adk_temporal.devserver import DevServer

from .. import approvals_app
from ..approvals_app import APP, USER, paused, start
from ..commands import adk_command, offline_env, run_cli
from .conftest import WorkerFactory

pytestmark = pytest.mark.integration


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


async def test_claims_votes_and_a_batch_from_the_cli_then_show_and_audit_name_everyone(
    run_worker: WorkerFactory, dev_server: DevServer, tmp_path: Path
) -> None:
    """alice claims the refund (bob is refused naming her, and does not see it in his
    inbox), votes, and is refused a second vote; bob's ``confirm --all`` completes it;
    ``show`` lists both answers and ``audit`` the claim and both votes."""
    async with run_worker([approvals_app.clerk()], models=approvals_app.models()) as rt:
        handle, session = await start(rt, "refund 33")
        request = await paused(handle)
        wid, rid, queue = handle.workflow_id, request.id, ["--task-queue", rt.task_queue]
        as_alice = ["--as", "alice", "--group", "finance"]
        as_bob = ["--as", "bob", "--group", "finance"]
        _ok(await run_cli(dev_server.address, "claim", wid, rid, *as_alice, *queue))
        refused = await run_cli(dev_server.address, "confirm", wid, rid, "--approve", *as_bob)
        assert refused.returncode == 1
        assert "claimed by alice until" in refused.stderr and "[claimed]" in refused.stderr
        bobs = _ok(await run_cli(dev_server.address, "inbox", "--as", "bob", "--json", *queue))
        assert rid not in bobs
        alices = await run_cli(dev_server.address, "inbox", "--as", "alice", "--claimed", *queue)
        assert rid in _ok(alices) and "0 of 2 votes" in alices.stdout
        _ok(await run_cli(dev_server.address, "confirm", wid, rid, "--approve", *as_alice))
        again = await run_cli(dev_server.address, "confirm", wid, rid, "--approve", *as_alice)
        assert again.returncode == 1 and "[duplicate_vote]" in again.stderr
        batch = await run_cli(dev_server.address, "confirm", wid, "--all", "--approve", *as_bob)
        assert f"{rid} applied" in _ok(batch)
        await handle.result()
        shown = json.loads(_ok(await run_cli(dev_server.address, "show", wid, "--json")))
    votes = [(a["answered_by"], a["channel"]) for a in shown["answers"] if a["request_id"] == rid]
    assert ("alice", "cli") in votes and ("bob", "cli") in votes
    store = ["--app", APP, "--user", USER, "--data-dir", str(tmp_path)]
    listed = await run_cli_local("audit", *store, "--session", session, "--json")
    entries = json.loads(_ok(listed))["entries"]
    assert [(e["decision"], e["answered_by"]) for e in entries] == [
        ("claimed", "alice"),
        ("approved", "alice"),
        ("approved", "bob"),
    ]


async def test_a_grant_from_the_cli_is_listed_and_revoked(
    run_worker: WorkerFactory, dev_server: DevServer, tmp_path: Path
) -> None:
    """``confirm --grant-calls 2 --grant-where 'amount <= 50'`` gives a grant the next
    credit runs under; ``grants list`` shows it with its use; ``grants revoke`` ends it and
    the audit lists the revocation; a malformed predicate is a usage error."""
    async with run_worker([approvals_app.clerk()], models=approvals_app.models()) as rt:
        handle, session = await start(rt, "credit 21")
        request = await paused(handle)
        bad = await run_cli(
            dev_server.address,
            "confirm",
            handle.workflow_id,
            request.id,
            "--approve",
            "--grant-calls",
            "2",
            "--grant-where",
            "amount <=",
        )
        assert bad.returncode == 2 and "predicate" in bad.stderr
        _ok(
            await run_cli(
                dev_server.address,
                "confirm",
                handle.workflow_id,
                request.id,
                "--approve",
                "--as",
                "bob",
                "--grant-calls",
                "2",
                "--grant-where",
                "amount <= 50",
                "--grant-for",
                "2h",
            )
        )
        await handle.result()
        later, _ = await start(rt, "credit 22", session=session)
        assert (await later.result()).status == "completed"
    store = ["--app", APP, "--user", USER, "--data-dir", str(tmp_path)]
    listed = json.loads(_ok(await run_cli_local("grants", "list", *store, "--json")))["grants"]
    [grant] = listed
    assert (grant["uses"], grant["granted_by"], grant["where"]) == (1, "bob", "amount <= 50")
    in_app = ["--app", APP, "--data-dir", str(tmp_path)]
    revoked = json.loads(
        _ok(await run_cli_local("grants", "revoke", grant["id"], "--as", "ops", *in_app, "--json"))
    )
    assert revoked["revoked_by"] == "ops"
    audit = json.loads(_ok(await run_cli_local("audit", *store, "--session", session, "--json")))[
        "entries"
    ]
    assert [e["decision"] for e in audit if e["grant_id"] == grant["id"]] == [
        "approved",
        "granted",
        "revoked",
    ]
    unknown = await run_cli_local("grants", "revoke", "grant-nope", *in_app)
    assert unknown.returncode == 1 and "no grant" in unknown.stderr


async def run_cli_local(*args: str) -> subprocess.CompletedProcess[str]:
    """A command that reads only the session store (no Temporal)."""
    return await asyncio.to_thread(
        subprocess.run,
        [*adk_command(), *args],
        capture_output=True,
        text=True,
        timeout=90,
        env=offline_env(),
    )
