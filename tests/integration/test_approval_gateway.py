"""Approval policies through the real HTTP gateway and worker processes: principals and
groups from the tokens file, claims answered 409 naming the claimant, the inbox, votes
and self-approval refused with their reasons, batch answers, and standing grants listed
and revoked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_temporal.devserver import DevServer

from ..approvals_app import EFFECTS_ENV, effects
from .gateway import Gateway, Reply, gateway_process
from .test_web_api import call, until
from .workers import Deployment, worker_process

pytestmark = pytest.mark.integration

APP = "approvals"
ALICE = "t-alice-0123456789abcdef"
BOB = "t-bob-000123456789abcdef"
CAROL = "t-carol-00123456789abcdef"
TOKENS = [
    f"{ALICE} {APP} principal=alice groups=finance",
    f"{BOB} {APP} principal=bob groups=finance,ops",
    f"{CAROL} {APP} principal=carol groups=finance",
]
RUNS = f"/v1/apps/{APP}/runs"
WORKER_APP = "tests.approvals_app:app"


@pytest.fixture(scope="module")
def deployment(dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Deployment:
    """The task queue and data directory the workers and the gateway share."""
    return Deployment(dev_server.address, "approval-gw", tmp_path_factory.mktemp("approval-gw"))


@pytest.fixture(scope="module")
def effects_file(deployment: Deployment) -> Path:
    """Where the worker's tools record their side effects."""
    return deployment.data_dir / "effects.jsonl"


@pytest.fixture(scope="module")
def gateway(
    deployment: Deployment, effects_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Gateway]:
    """The gateway (and a worker) for the module, tokens naming alice, bob and carol."""
    env = {EFFECTS_ENV: str(effects_file)}
    with (
        worker_process(deployment, app=WORKER_APP, env=env),
        gateway_process(
            deployment, tmp_path_factory.mktemp("gw"), app=WORKER_APP, tokens_lines=TOKENS, env=env
        ) as running,
    ):
        yield running


async def _as(gateway: Gateway, token: str, method: str, path: str, body: Any = None) -> Reply:
    return await call(gateway, method, path, body, token=token)


async def paused(gateway: Gateway, message: str, token: str = CAROL) -> tuple[str, str]:
    """Start ``message`` as ``token``'s holder; the session path and the request id once it
    waits for approval."""
    reply = await _as(
        gateway, token, "POST", RUNS, {"agent": "clerk", "user_id": "u-gw", "message": message}
    )
    assert reply.status == 201, reply.text
    path: str = reply.json["links"]["self"]

    async def waiting() -> list[dict[str, Any]]:
        shown = (await _as(gateway, token, "GET", path)).json
        return shown["waiting_for"] if shown["status"] == "awaiting_confirmation" else []

    [request] = await until(waiting)
    return path, request["id"]


async def test_a_claim_makes_bobs_answer_a_409_naming_alice_and_votes_need_two(
    gateway: Gateway, effects_file: Path
) -> None:
    """alice claims the refund: bob's approval is 409 ``claimed`` naming her and it leaves
    bob's inbox; carol (who started it) is 403 ``self_approval``; alice's vote is taken and
    releases her claim, her second is 409 ``duplicate_vote``; bob's completes it, the
    refund runs once, and the audit names alice and bob with their claims and votes."""
    path, request_id = await paused(gateway, "refund 25")
    claimed = await _as(
        gateway, ALICE, "POST", f"{path}/requests/{request_id}/claim", {"seconds": 600}
    )
    assert claimed.status == 200, claimed.text
    refused = await _as(
        gateway, BOB, "POST", f"{path}/confirm", {"confirmation_id": request_id, "confirmed": True}
    )
    assert refused.status == 409, refused.text
    assert refused.json["error"]["reason"] == "claimed"
    assert "claimed by alice until" in refused.json["error"]["message"]
    inbox = f"/v1/apps/{APP}/inbox"
    assert request_id not in {
        r["id"] for r in (await _as(gateway, BOB, "GET", inbox)).json["requests"]
    }
    mine = (await _as(gateway, ALICE, "GET", f"{inbox}?claimed=true")).json["requests"]
    assert request_id in {r["id"] for r in mine}
    own = await _as(
        gateway,
        CAROL,
        "POST",
        f"{path}/confirm",
        {"confirmation_id": request_id, "confirmed": True},
    )
    assert (own.status, own.json["error"]["reason"]) == (409, "claimed")
    vote = {"confirmation_id": request_id, "confirmed": True}
    assert (await _as(gateway, ALICE, "POST", f"{path}/confirm", vote)).status == 200
    self_approval = await _as(gateway, CAROL, "POST", f"{path}/confirm", vote)
    assert (self_approval.status, self_approval.json["error"]["reason"]) == (403, "self_approval")
    again = await _as(gateway, ALICE, "POST", f"{path}/confirm", vote)
    assert (again.status, again.json["error"]["reason"]) == (409, "duplicate_vote")
    assert (await _as(gateway, BOB, "POST", f"{path}/confirm", vote)).status == 200

    async def completed() -> bool:
        return bool((await _as(gateway, BOB, "GET", path)).json["status"] == "completed")

    await until(completed)
    audit = (await _as(gateway, BOB, "GET", f"{path}/audit")).json["entries"]
    assert [(e["decision"], e["answered_by"], e["channel"]) for e in audit] == [
        ("claimed", "alice", "gateway"),
        ("approved", "alice", "gateway"),
        ("approved", "bob", "gateway"),
    ]
    refunds = [e for e in effects(effects_file) if e["tool"] == "refund" and e["amount"] == 25]
    assert len(refunds) == 1


async def test_an_operator_assigns_and_a_batch_answers_every_request(gateway: Gateway) -> None:
    """A request assigned to ops shows in the ops inbox; a batch rejection by bob answers
    every open request of the run, each listed with its outcome."""
    path, request_id = await paused(gateway, "credit 5")
    assigned = await _as(
        gateway, ALICE, "POST", f"{path}/requests/{request_id}/assign", {"assignee": "ops"}
    )
    assert assigned.status == 200, assigned.text
    ops = (await _as(gateway, BOB, "GET", f"/v1/apps/{APP}/inbox?assignee=ops")).json["requests"]
    assert [r["id"] for r in ops if r["id"] == request_id] == [request_id]
    batch = await _as(gateway, BOB, "POST", f"{path}/confirm-batch", {"confirmed": False})
    assert batch.status == 200, batch.text
    assert batch.json["answers"] == [{"request_id": request_id, "outcome": "applied"}]

    async def closed() -> bool:
        return bool((await _as(gateway, BOB, "GET", path)).json["status"] == "completed")

    await until(closed)
    audit = (await _as(gateway, BOB, "GET", f"{path}/audit")).json["entries"]
    assert [(e["decision"], e["answered_by"], e["assignee"]) for e in audit] == [
        ("assigned", "alice", "ops"),
        ("rejected", "bob", None),
    ]


async def test_a_grant_given_over_http_is_listed_used_and_revoked(
    gateway: Gateway, effects_file: Path
) -> None:
    """bob approves credit 10 with a grant (5 calls, amount <= 20): it is listed, the next
    credit 15 runs unasked; once bob revokes it, credit 12 pauses again."""
    path, request_id = await paused(gateway, "credit 10")
    terms = {"max_calls": 5, "where": "amount <= 20", "ttl": "PT2H"}
    body = {"confirmation_id": request_id, "confirmed": True, "grant": terms}
    assert (await _as(gateway, BOB, "POST", f"{path}/confirm", body)).status == 200
    session = path.rsplit("/", 1)[-1]

    async def listed() -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = (await _as(gateway, BOB, "GET", f"{path}/grants")).json[
            "grants"
        ]
        return found

    [grant] = await until(listed)
    assert (grant["granted_by"], grant["where"], grant["session_id"]) == (
        "bob",
        "amount <= 20",
        session,
    )
    await _next(gateway, session, "credit 15")

    async def credited() -> bool:
        return any(e["amount"] == 15 for e in effects(effects_file) if e["tool"] == "credit")

    await until(credited)
    revoked = await _as(gateway, BOB, "POST", f"/v1/apps/{APP}/grants/{grant['id']}/revoke")
    assert (revoked.status, revoked.json["revoked_by"]) == (200, "bob")
    await _next(gateway, session, "credit 12")
    await until(lambda: _waits(gateway, path))
    audit = (await _as(gateway, BOB, "GET", f"{path}/audit")).json["entries"]
    assert [e["decision"] for e in audit if e["grant_id"] == grant["id"]] == [
        "approved",
        "granted",
        "revoked",
    ]


async def _next(gateway: Gateway, session: str, message: str) -> None:
    """Start ``message`` in ``session`` once its earlier invocation has finished."""
    follow = {"agent": "clerk", "user_id": "u-gw", "session_id": session, "message": message}

    async def started() -> bool:
        return (await _as(gateway, BOB, "POST", RUNS, follow)).status == 201

    await until(started)


async def _waits(gateway: Gateway, path: str) -> bool:
    shown = (await _as(gateway, BOB, "GET", path)).json
    return bool(shown["status"] == "awaiting_confirmation")
