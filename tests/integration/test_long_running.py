"""ADK's long-running tools on Temporal through real workers (issue 28).

The in-process port of ADK-Go ``tool/functiontool/long_running_function_test.go``
(``TestLongRunningFunctionFlow``) is in ``tests/flow/test_long_running.py``; here the run
waits in Temporal for the function response across a worker restart, which the CLI then
delivers, and an answer sent the moment the tool returned (before the run has opened the
request) is kept and applied.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import uuid

import pytest
from google.genai import types

from adk_temporal.audit import audit_entries
from adk_temporal.devserver import DevServer
from adk_temporal.errors import InvalidResumeInputError
from adk_temporal.flow.messages import PendingInput
from adk_temporal.ids import SessionKey

from ..adk_models import call
from ..adk_scenarios import long_running_agent
from ..commands import run_cli
from .conftest import WorkerFactory

pytestmark = pytest.mark.integration

APP = "long"
USER = "u-1"
REPLIES: list[str | types.FunctionCall] = [call("increaseByOne"), "response1", "response2"]


async def test_the_wait_survives_a_worker_restart_and_the_cli_answers(
    run_worker: WorkerFactory, dev_server: DevServer
) -> None:
    """The run waits with the call's input request; the worker stops; with a new one the
    CLI delivers the response, the model answers from it, and the tool ran once."""
    found = long_running_agent(REPLIES)
    key = SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")
    async with run_worker([found.agent], models=found.models) as first:
        handle = await first.adk.start(*key, "long_running_agent", "test1")
        await handle.wait_for_status("awaiting_input", timeout=30)
        [request] = await handle.pending()
        with pytest.raises(InvalidResumeInputError, match="object"):
            await handle.resume(request.id, "approved")  # a response is a JSON object
    async with run_worker([found.agent], models=found.models, task_queue=first.task_queue) as rt:
        done = await run_cli(
            dev_server.address,
            "resume",
            handle.workflow_id,
            request.id,
            "--input",
            json.dumps({"status": "approved"}),
            "--task-queue",
            rt.task_queue,
            "--checked",
        )
        assert done.returncode == 0, done.stderr
        result = await handle.result()
        events = (await rt.sessions.get(key)).events
    assert (result.status, result.final_text) == ("completed", "response2")
    assert isinstance(request, PendingInput)
    assert request.long_running and request.id == found.calls[0]
    assert len(found.calls) == 1
    answered = [e for e in events if e.author == "user" and e.function_responses()]
    assert [r.response for e in answered for r in e.function_responses()] == [
        {"status": "approved"}
    ]
    assert found.model.requests[-1].contents[-1].parts[0].function_response.response == {
        "status": "approved"
    }
    # Who answered is in the audit, though the response itself is what the model reads.
    [entry] = audit_entries(events)
    assert (entry.request_id, entry.decision, entry.channel) == (request.id, "answered", "cli")
    assert entry.answered_by == getpass.getuser() and entry.tool == request.tool


async def test_a_response_sent_before_the_request_opened_is_kept(
    run_worker: WorkerFactory,
) -> None:
    """The external system answers (by signal) as soon as the tool returned: the answer is
    buffered until the run opens the request, then applied; nothing is refused."""
    found = long_running_agent(REPLIES)
    key = SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")
    async with run_worker([found.agent], models=found.models) as rt:
        handle = await rt.adk.start(*key, "long_running_agent", "test1")
        async with asyncio.timeout(30):
            while not found.calls:
                await asyncio.sleep(0.01)
        await handle.resume(found.calls[0], {"status": "done early"}, checked=False)
        result = await handle.result()
        status = await handle.status()
    assert (result.status, result.final_text) == ("completed", "response2")
    assert status.ignored_signals == []
