"""Streamed model output through the invocation flow: pieces live, superseded, never stored."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable

from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.errors import ModelUnavailableError
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry
from adk_temporal.runner import LocalInvocation

from .conftest import LocalFactory

APP = "streaming"
USER = "u-1"


def _text(text: str, *, partial: bool) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=text)]), partial=partial
    )


class GatedModel:
    """Streams "Hello, " at once and "world." once the test opens the gate.

    With ``fail_first_attempt`` the first call breaks off after "Hello, ", as a connection
    dropped mid-stream would.
    """

    def __init__(self, *, fail_first_attempt: bool = False) -> None:
        self.gate = asyncio.Event()
        self.requests: list[LlmRequest] = []
        self._fail = fail_first_attempt

    @property
    def name(self) -> str:
        return "gated"

    async def generate(self, request: LlmRequest) -> LlmResponse:
        return _text("Hello, world.", partial=False)

    async def generate_stream(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        self.requests.append(request)
        yield _text("Hello, ", partial=True)
        if self._fail:
            self._fail = False
            raise ModelUnavailableError(None, "connection reset mid-stream")
        await self.gate.wait()
        yield _text("world.", partial=True)
        yield _text("Hello, world.", partial=False)


def _registry(model: GatedModel) -> ModelRegistry:
    models = ModelRegistry()
    models.register("gated", lambda _: model)
    return models


async def _follow(
    invocation: LocalInvocation, model: GatedModel, opens: Callable[[Event], bool]
) -> list[Event]:
    """Everything ``invocation.stream()`` yields; the first piece ``opens`` accepts opens
    the model's gate, which must still be closed then (the model is still writing)."""
    seen: list[Event] = []
    async with asyncio.timeout(30):
        async for event in invocation.stream():
            seen.append(event)
            if event.partial and not model.gate.is_set() and opens(event):
                model.gate.set()
    return seen


async def test_pieces_arrive_while_the_model_still_writes_and_the_final_event_supersedes_them(
    run_local: LocalFactory,
) -> None:
    model = GatedModel()
    agent = Agent(name="writer", model="gated")
    session = f"s-{uuid.uuid4().hex[:8]}"
    async with run_local([agent], models=_registry(model)) as rt:
        invocation = await rt.adk.start(APP, USER, session, "writer", "hi", stream=True)
        seen = await _follow(invocation, model, lambda e: e.text() == "Hello, ")
        assert model.gate.is_set()
        assert (await invocation.result()).final_text == "Hello, world."
        pieces = [e for e in seen if e.partial]
        finals = [e for e in seen if not e.partial]
        model_event = finals[-1]
        # The last piece may be superseded before the follower reads it; the final event
        # then carries the rest of the text.
        assert model_event.text() == "Hello, world."
        assert model_event.text().startswith("".join(p.text() for p in pieces))
        assert {p.id for p in pieces} == {model_event.id}
        assert {p.attempt for p in pieces} == {1}
        assert seen.index(model_event) > seen.index(pieces[-1])
        stored = await rt.sessions.get(SessionKey(APP, USER, session))
        assert [e.partial for e in stored.events] == [None, None]
        assert [e.id for e in stored.events] == [e.id for e in finals]

        # The next turn's model sees the reply once: the pieces were never history.
        model.gate.set()
        second = await rt.adk.start(APP, USER, session, "writer", "again", stream=True)
        await second.result()
        texts = [p.text for c in model.requests[-1].contents for p in c.parts or [] if p.text]
        assert texts == ["hi", "Hello, world.", "again"]


async def test_a_retried_step_streams_under_a_higher_attempt(run_local: LocalFactory) -> None:
    model = GatedModel(fail_first_attempt=True)
    agent = Agent(name="writer", model="gated")
    session = f"s-{uuid.uuid4().hex[:8]}"
    async with run_local([agent], models=_registry(model)) as rt:
        invocation = await rt.adk.start(APP, USER, session, "writer", "hi", stream=True)
        seen = await _follow(invocation, model, lambda e: e.attempt == 2)
        assert (await invocation.result()).final_text == "Hello, world."
    pieces = [(e.attempt, e.text()) for e in seen if e.partial]
    # The abandoned attempt's text was published before the retry began (a second later).
    assert pieces[:2] == [(1, "Hello, "), (2, "Hello, ")]
    assert {p.id for p in seen if p.partial} == {seen[-1].id}


async def test_without_stream_no_pieces_are_published(run_local: LocalFactory) -> None:
    model = GatedModel()
    model.gate.set()
    agent = Agent(name="writer", model="gated")
    session = f"s-{uuid.uuid4().hex[:8]}"
    async with run_local([agent], models=_registry(model)) as rt:
        invocation = await rt.adk.start(APP, USER, session, "writer", "hi")
        seen = [e async for e in invocation.stream()]
        assert (await invocation.result()).final_text == "Hello, world."
    assert [e.partial for e in seen] == [None, None]
    assert model.requests == []
