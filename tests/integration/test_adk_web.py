"""ADK's own client against ``adk-temporal web`` (SPEC §1.14; issue 43): google-adk 2.13's
``AdkWebServerClient``, run unchanged from an environment of its own, calls every method
over HTTP against a gateway in development mode and real worker processes; a confirmation
is answered by the client's next ``/run`` and the tool runs exactly once, also when the
worker was killed while the confirmation waited.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_temporal.devserver import DevServer

from .. import adk_web_app
from ..adk_env import AdkEnv, adk_env
from .gateway import OTHER_TOKEN, TOKEN, Gateway, gateway_process
from .workers import REPO, Deployment, died_by_sigkill, worker_process

APP = "tests.adk_web_app:app"
CALLS = Path(__file__).with_name("adk_client_calls.py")


@pytest.fixture(scope="module")
def adk() -> AdkEnv:
    """google-adk 2.13.0 in its own environment (built once, cached)."""
    return adk_env()


@pytest.fixture
def deployment(dev_server: DevServer, tmp_path: Path) -> Deployment:
    """A fresh task queue and data directory."""
    return Deployment(dev_server.address, f"adk-web-{uuid.uuid4().hex[:8]}", tmp_path / "data")


def _env(deployment: Deployment) -> dict[str, str]:
    return {adk_web_app.RUNS_ENV: str(deployment.data_dir / "runs.txt")}


def _runs(deployment: Deployment) -> list[str]:
    ledger = deployment.data_dir / "runs.txt"
    return ledger.read_text().splitlines() if ledger.exists() else []


@pytest.fixture
def gateway(deployment: Deployment, tmp_path: Path, adk: AdkEnv) -> Iterator[Gateway]:
    """The gateway in development mode, serving the test app and ADK's dev UI."""
    args = ["--adk-dev", "--adk-dev-ui", str(adk.dev_ui)]
    with gateway_process(deployment, tmp_path, app=APP, args=args) as served:
        yield served


def _calls(adk: AdkEnv, *args: str) -> Any:
    done = adk.run(CALLS, *args)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


async def test_adk_client_calls_every_method_with_and_without_streaming(
    deployment: Deployment, gateway: Gateway, adk: AdkEnv
) -> None:
    """Sessions (initial state, update, get, delete), run_agent without and with streaming
    (pieces as partial events), artifact metadata and the version route, all through ADK's
    client; a confirmation pause returns ADK's three events and the next /run approves it:
    the tool's result under the original call id, then the reply; the tool ran once."""
    with worker_process(deployment, app=APP, env=_env(deployment)):
        found = await asyncio.to_thread(_calls, adk, "all", gateway.base)
    assert found["version"]["language"] == "python"
    assert found["created_state"] == {"user_name": "Ada"}
    assert found["updated_state"] == {"user_name": "Ada", "tier": "gold"}
    assert [e["calls"] for e in found["plain"]] == [["get_weather"], [], []]
    assert found["plain"][-1]["text"] == "It is sunny in Rome."
    assert not any(e["partial"] for e in found["plain"])
    pieces = [e["text"] for e in found["streamed"] if e["partial"]]
    assert pieces and all(p in "It is sunny in Oslo." for p in pieces)
    assert found["streamed"][-1]["text"] == "It is sunny in Oslo."
    assert not found["streamed"][-1]["partial"]
    call, gate, request = found["paused"]
    assert call["calls"] == ["pay"]
    assert gate["confirmations"] == call["call_ids"]
    assert "requires confirmation" in gate["responses"][0]["error"]
    assert request["calls"] == ["adk_request_confirmation"]
    assert request["long_running"] == request["call_ids"]
    result, reply = found["answered"]
    assert result["responses"] == [{"status": "paid", "amount": 5}]
    assert reply["text"] == "Paid 5."
    assert found["state"]["paid"] == 5 and found["state"]["last_city"] == "Oslo"
    assert found["authors"].count("user") >= 4
    assert found["artifact"] == [1, "text/plain", [1]]
    assert found["after_delete"] == 404
    assert len(_runs(deployment)) == 1


async def test_an_answer_by_the_next_run_after_the_worker_was_killed_runs_the_tool_once(
    deployment: Deployment, gateway: Gateway, adk: AdkEnv
) -> None:
    """The worker is SIGKILLed while the confirmation waits; the next /run answers it while
    no worker runs and returns once a new worker took it: the tool's result and the reply,
    and the tool ran exactly once."""
    with worker_process(deployment, app=APP, env=_env(deployment)) as worker:
        paused = await asyncio.to_thread(_calls, adk, "pause", gateway.base)
        worker.kill()
        assert died_by_sigkill(worker)
    answering = asyncio.create_task(
        asyncio.to_thread(_calls, adk, "answer", gateway.base, paused["session"], paused["call_id"])
    )
    await asyncio.sleep(0)
    assert not answering.done()
    with worker_process(deployment, app=APP, env=_env(deployment)):
        result, reply = await answering
    assert result["responses"] == [{"status": "paid", "amount": 5}]
    assert reply["text"] == "Paid 5."
    assert _runs(deployment) == [f"{paused['events'][0]['call_ids'][0]} 5"]


def _http(
    gateway: Gateway, method: str, path: str, body: Any = None, **kwargs: Any
) -> tuple[int, Any]:
    reply = gateway.call(method, path, body, **kwargs)
    return reply.status, json.loads(reply.text) if reply.text else None


async def test_development_mode_refuses_other_hosts_and_pages_of_other_origins(
    gateway: Gateway,
) -> None:
    """Without a token ADK's routes answer this machine only: a request naming another
    host (DNS rebinding) or sent by a page of another origin is refused with 403."""
    status, apps = await asyncio.to_thread(_http, gateway, "GET", "/list-apps", token=None)
    assert (status, apps) == (200, ["adkweb"])
    rebound = {"Host": "attacker.example:80"}
    status, body = await asyncio.to_thread(
        _http, gateway, "GET", "/list-apps", token=None, headers=rebound
    )
    assert (status, body["error"]["type"]) == (403, "local_only")
    page = {"Origin": "https://attacker.example"}
    run = {"app_name": "adkweb", "user_id": "u", "session_id": "s", "new_message": None}
    status, body = await asyncio.to_thread(
        _http, gateway, "POST", "/run", run, token=None, headers=page
    )
    assert (status, body["error"]["type"]) == (403, "cross_origin")


def test_development_mode_needs_a_loopback_address(deployment: Deployment) -> None:
    """``web --adk-dev --host 0.0.0.0`` refuses to start (usage error, exit 2)."""
    done = subprocess.run(
        deployment.command("web", "--examples", "--adk-dev", "--host", "0.0.0.0"),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "listens on loopback only" in done.stderr


async def test_with_tokens_adk_routes_are_scoped_like_the_rest(
    deployment: Deployment, tmp_path: Path
) -> None:
    """Outside development mode ADK's routes need a token and show only its apps."""
    with gateway_process(deployment, tmp_path) as served:
        status, _ = await asyncio.to_thread(_http, served, "GET", "/list-apps", token=None)
        assert status == 401
        assert await asyncio.to_thread(_http, served, "GET", "/list-apps") == (200, ["weather"])
        assert await asyncio.to_thread(_http, served, "GET", "/list-apps", token=OTHER_TOKEN) == (
            200,
            [],
        )
        path = "/apps/weather/users/u/sessions"
        status, _ = await asyncio.to_thread(_http, served, "POST", path, {}, token=OTHER_TOKEN)
        assert status == 403
        status, created = await asyncio.to_thread(
            _http, served, "POST", path, {"sessionId": "s-1", "state": {"a": 1}}, token=TOKEN
        )
        assert (status, created["id"], created["state"]) == (200, "s-1", {"a": 1})
        status, again = await asyncio.to_thread(_http, served, "POST", path, {"sessionId": "s-1"})
        assert (status, again["error"]["type"]) == (409, "session_exists")
