"""ADK's long-running tools, on the in-process runner (issue 28).

Ported from ADK-Go ``tool/functiontool/long_running_function_test.go``
(``TestNewLongRunningFunctionTool``, ``TestLongRunningFunctionFlow``,
``TestLongRunningToolIDsAreSet``): the tool returns a pending status at once, its call id
is in the model event's ``long_running_tool_ids``, and each later function response for
that id reaches the model as the answer to the call — the turns in between dropped from
its view — without calling the tool again. Where ADK's run ends after the first turn, the
durable invocation waits for the first response (an input request whose id is the call
id); later ones go as new messages, as in ADK.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

import pytest
from google.genai import types

from adk_temporal.errors import InvalidResumeInputError
from adk_temporal.flow.messages import PendingInput
from adk_temporal.ids import SessionKey
from adk_temporal.tools import LONG_RUNNING_NOTE, LongRunningFunctionTool

from ..adk_models import call
from ..adk_scenarios import long_running_agent
from .conftest import LocalFactory

APP = "long"
USER = "u-1"


def _text(text: str, role: str = "user") -> types.Content:
    return types.Content(role=role, parts=[types.Part(text=text)])


def _response(response: Mapping[str, object], call_id: str | None = None) -> types.Content:
    reply = types.FunctionResponse(id=call_id, name="increaseByOne", response=dict(response))
    return types.Content(role="user", parts=[types.Part(function_response=reply)])


def test_a_long_running_tool_tells_the_model_not_to_call_it_again() -> None:
    """The declaration keeps the description and adds the note (TestNewLongRunningFunctionTool)."""

    def total(a: int, b: int) -> dict[str, str]:
        """sums two integers"""
        return {"result": "Processing sum"}

    made = LongRunningFunctionTool(total)
    assert made.is_long_running and made.description == "sums two integers"
    assert made.declaration().description == f"sums two integers\n\n{LONG_RUNNING_NOTE}"


async def test_the_invocation_waits_for_the_function_response_and_the_model_sees_it(
    run_local: LocalFactory,
) -> None:
    """test1 → call, pending response, response1; the run waits with an input request
    named by the call id. The response "still waiting" resumes it: the model sees
    [test1, call, response] and answers response2. Two more responses, sent as messages,
    give response3 and response4; the tool ran once (TestLongRunningFunctionFlow)."""
    replies = [call("increaseByOne"), "response1", "response2", "response3", "response4"]
    answered: tuple[Mapping[str, object], ...] = (
        {"status": "still waiting"},
        {"result": 2},
        {"result": 3},
    )
    found = long_running_agent(replies)
    key = SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")
    async with run_local([found.agent], models=found.models) as rt:
        handle = await rt.adk.start(*key, "long_running_agent", "test1")
        await handle.wait_for_status("awaiting_input", timeout=30)
        [request] = await handle.pending()
        events = (await rt.sessions.get(key)).events
        [call_id] = found.calls
        assert (request.id, request.function_call_id, request.tool) == (
            call_id,
            call_id,
            "increaseByOne",
        )
        assert isinstance(request, PendingInput)
        assert request.long_running
        first, second = found.model.requests
        assert first.contents == [_text("test1")]
        assert second.contents[1:] == [
            types.Content(role="model", parts=[types.Part(function_call=_call_without_id())]),
            _response({"status": "pending"}),
        ]
        await handle.resume(call_id, {"status": "still waiting"})
        result = await handle.result()
        later = []
        for value in answered[1:]:
            run = await rt.adk.run(*key, "long_running_agent", _response(value, call_id))
            later.append(run.final_text)
        stored = (await rt.sessions.get(key)).events
    assert (result.status, result.final_text) == ("completed", "response2")
    assert later == ["response3", "response4"]
    assert found.calls == [call_id]
    # TestLongRunningToolIDsAreSet: the call event names the call; no other event does.
    assert events[1].long_running_tool_ids == [call_id]
    assert all(not e.long_running_tool_ids for e in stored if e.id != events[1].id)
    for request, value in zip(found.model.requests[2:], answered, strict=True):
        assert len(request.contents) == 3  # the responses merged, the turns between dropped
        assert request.contents[-1] == _response(value)


def _call_without_id() -> types.FunctionCall:
    """The model's call as the model sees it again: generated ids are blanked."""
    return types.FunctionCall(name="increaseByOne", args={})


async def test_a_response_that_is_no_object_is_refused_and_the_request_stays_open(
    run_local: LocalFactory,
) -> None:
    """A function response is a JSON object: a list is refused with a typed error naming
    the schema, nothing is stored, and the request still takes a valid response."""
    found = long_running_agent([call("increaseByOne"), "response1", "response2"])
    key = SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")
    async with run_local([found.agent], models=found.models) as rt:
        handle = await rt.adk.start(*key, "long_running_agent", "test1")
        await handle.wait_for_status("awaiting_input", timeout=30)
        [request] = await handle.pending()
        before = len((await rt.sessions.get(key)).events)
        with pytest.raises(InvalidResumeInputError, match="object"):
            await handle.resume(request.id, ["approved"])
        assert len((await rt.sessions.get(key)).events) == before
        assert [r.id for r in await handle.pending()] == [request.id]
        await handle.resume(request.id, {"status": "approved"})
        assert (await handle.result()).final_text == "response2"
