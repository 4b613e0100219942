"""Streamed model replies: Gemini chunk aggregation, the stream_model fallback, ScriptedModel."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, cast

import httpx2
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from adk_temporal.errors import ModelRequestError, ModelUnavailableError
from adk_temporal.models import (
    GeminiModel,
    LlmRequest,
    LlmResponse,
    Model,
    ScriptedCall,
    ScriptedModel,
    ScriptedRule,
    StreamingModel,
    stream_model,
)


def user(text: str) -> types.Content:
    """A user text turn."""
    return types.Content(role="user", parts=[types.Part(text=text)])


def request(text: str = "hi") -> LlmRequest:
    """An LlmRequest with one user turn."""
    return LlmRequest(model="m", contents=[user(text)])


def chunk(
    *parts: types.Part,
    finish: str | None = None,
    usage: tuple[int, int] | None = None,
) -> types.GenerateContentResponse:
    """One streamed GenerateContentResponse holding ``parts`` of the first candidate."""
    return types.GenerateContentResponse(
        candidates=[
            types.Candidate(
                content=types.Content(role="model", parts=list(parts)) if parts else None,
                finish_reason=types.FinishReason(finish) if finish else None,
            )
        ],
        usage_metadata=None
        if usage is None
        else types.GenerateContentResponseUsageMetadata(
            prompt_token_count=usage[0], candidates_token_count=usage[1]
        ),
    )


def text(value: str, *, thought: bool | None = None) -> types.Part:
    """A text part."""
    return types.Part(text=value, thought=thought)


def call(name: str, **args: Any) -> types.Part:
    """A function-call part."""
    return types.Part(function_call=types.FunctionCall(name=name, args=args))


@dataclass
class _Stream:
    """An async iterator over scripted chunks that may raise, recording whether it was closed."""

    items: Sequence[types.GenerateContentResponse | BaseException]
    closed: bool = False
    _at: int = 0

    def __aiter__(self) -> _Stream:
        return self

    async def __anext__(self) -> types.GenerateContentResponse:
        if self._at >= len(self.items):
            raise StopAsyncIteration
        item = self.items[self._at]
        self._at += 1
        if isinstance(item, BaseException):
            raise item
        return item

    async def aclose(self) -> None:
        self.closed = True


@dataclass
class _Models:
    """Stands in for ``client.aio.models``: streams scripted chunks, or fails to open."""

    stream: _Stream
    open_error: BaseException | None = None
    whole: types.GenerateContentResponse | None = None
    calls: list[str] = field(default_factory=list)

    async def generate_content_stream(self, **kwargs: Any) -> _Stream:
        self.calls.append("stream")
        if self.open_error is not None:
            raise self.open_error
        return self.stream

    async def generate_content(self, **kwargs: Any) -> types.GenerateContentResponse:
        self.calls.append("generate")
        assert self.whole is not None
        return self.whole


@dataclass
class _Aio:
    models: _Models


@dataclass
class _Client:
    aio: _Aio


def gemini(
    *items: types.GenerateContentResponse | BaseException,
    open_error: BaseException | None = None,
    whole: types.GenerateContentResponse | None = None,
) -> tuple[GeminiModel, _Stream]:
    """A GeminiModel over a stub client that streams ``items``; also returns the stream."""
    stream = _Stream(items)
    client = _Client(_Aio(_Models(stream, open_error, whole)))
    return GeminiModel("gemini-test", client=cast(genai.Client, client)), stream


async def collect(stream: AsyncIterator[LlmResponse]) -> list[LlmResponse]:
    """Every item of ``stream``."""
    return [item async for item in stream]


async def test_gemini_stream_yields_text_deltas_then_the_aggregated_reply() -> None:
    """Partials carry each chunk's text only; the final joins it, with last finish and usage."""
    model, stream = gemini(
        chunk(text("Sun"), usage=(5, 1)),
        chunk(text("ny in "), usage=(5, 2)),
        chunk(text("Hangzhou."), finish="STOP", usage=(5, 4)),
    )
    *partials, final = await collect(model.generate_stream(request()))
    assert [p.text() for p in partials] == ["Sun", "ny in ", "Hangzhou."]
    assert all(p.partial and p.function_calls() == [] for p in partials)
    assert final.partial is False
    assert final.parts() == [types.Part(text="Sunny in Hangzhou.")]
    assert final.finish_reason == "STOP"
    assert final.usage is not None and final.usage.candidates_token_count == 4
    assert stream.closed


async def test_gemini_stream_final_equals_generate_for_the_same_reply() -> None:
    """The final streamed item is the LlmResponse generate() returns for the joined reply."""
    whole = chunk(text("I will check."), call("get_weather", city="Paris"), finish="STOP")
    whole.usage_metadata = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=3, candidates_token_count=7
    )
    model, _ = gemini(
        chunk(text("I will ")),
        chunk(text("check.")),
        chunk(call("get_weather", city="Paris"), finish="STOP", usage=(3, 7)),
        whole=whole,
    )
    *partials, final = await collect(model.generate_stream(request()))
    assert [p.text() for p in partials] == ["I will ", "check."]
    assert final == await model.generate(request())


async def test_gemini_stream_keeps_thoughts_apart_and_calls_in_order() -> None:
    """Thought text joins apart from answer text; parallel calls stay separate, in order."""
    model, _ = gemini(
        chunk(text("Let me ", thought=True)),
        chunk(text("think.", thought=True), text("Paris")),
        chunk(text(" and Rome:"), call("get_weather", city="Paris")),
        chunk(call("get_weather", city="Rome"), text(""), finish="STOP"),
    )
    *partials, final = await collect(model.generate_stream(request()))
    assert [p.text() for p in partials] == ["", "Paris", " and Rome:"]
    assert final.parts() == [
        text("Let me think.", thought=True),
        text("Paris and Rome:"),
        call("get_weather", city="Paris"),
        call("get_weather", city="Rome"),
    ]


async def test_gemini_stream_blocked_or_stopped_reply_is_an_error_response() -> None:
    """A stream ending in a safety stop yields the same error response generate() would."""
    model, _ = gemini(chunk(text("Here is")), chunk(finish="SAFETY"))
    *_, final = await collect(model.generate_stream(request()))
    assert (final.partial, final.error_code, final.content) == (False, "SAFETY", None)
    blocked, _ = gemini(
        types.GenerateContentResponse(
            prompt_feedback=types.GenerateContentResponsePromptFeedback(
                block_reason=types.BlockedReason.SAFETY
            )
        )
    )
    [reply] = await collect(blocked.generate_stream(request()))
    assert reply.error_code == "SAFETY" and reply.partial is False


@pytest.mark.parametrize(
    ("error", "expected", "status"),
    [
        (
            genai_errors.ServerError(503, {"error": {"message": "overloaded"}}),
            ModelUnavailableError,
            503,
        ),
        (
            genai_errors.ClientError(429, {"error": {"message": "quota"}}),
            ModelUnavailableError,
            429,
        ),
        (genai_errors.ClientError(400, {"error": {"message": "bad"}}), ModelRequestError, 400),
        (httpx2.ReadError("connection reset"), ModelUnavailableError, None),
    ],
)
async def test_gemini_stream_errors_are_typed_on_open_and_mid_stream(
    error: BaseException, expected: type[Exception], status: int | None
) -> None:
    """A failure opening the stream or after a chunk raises the same typed error as generate()."""
    failing, _ = gemini(open_error=error)
    with pytest.raises(expected) as on_open:
        await collect(failing.generate_stream(request()))
    model, stream = gemini(chunk(text("Sun")), error)
    received: list[LlmResponse] = []
    with pytest.raises(expected) as mid_stream:
        async for item in model.generate_stream(request()):
            received.append(item)
    assert [r.text() for r in received] == ["Sun"]
    assert isinstance(on_open.value, ModelUnavailableError | ModelRequestError)
    assert isinstance(mid_stream.value, ModelUnavailableError | ModelRequestError)
    assert on_open.value.status == mid_stream.value.status == status
    assert stream.closed


async def test_gemini_stream_closed_when_the_consumer_stops_early() -> None:
    """Leaving the stream after the first chunk closes the client's stream too."""
    model, stream = gemini(chunk(text("a")), chunk(text("b")), chunk(text("c"), finish="STOP"))
    async with aclosing(stream_model(model, request())) as items:
        async for _ in items:
            break
    assert stream.closed


@dataclass
class _PlainModel:
    """A model that only implements generate()."""

    reply: LlmResponse
    name: str = "plain"

    async def generate(self, request: LlmRequest) -> LlmResponse:
        return self.reply


async def test_stream_model_falls_back_to_generate() -> None:
    """A model without generate_stream streams exactly one item: its generate() reply."""
    reply = LlmResponse(
        content=types.Content(role="model", parts=[text("whole")]), finish_reason="STOP"
    )
    plain = _PlainModel(reply)
    assert isinstance(plain, Model) and not isinstance(plain, StreamingModel)
    assert await collect(stream_model(plain, request())) == [reply]


async def test_stream_model_uses_generate_stream_when_present() -> None:
    """A streaming model's chunks pass through stream_model unchanged, final last."""
    model = ScriptedModel(fallback_text="abcdef", stream_chunk_chars=4)
    assert isinstance(model, StreamingModel)
    items = await collect(stream_model(model, request()))
    assert [(i.text(), i.partial) for i in items] == [
        ("abcd", True),
        ("ef", True),
        ("abcdef", False),
    ]


async def test_scripted_stream_chunks_text_with_injected_delays() -> None:
    """Text replies come in chunk_chars pieces, the delay slept between chunks only."""
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    model = ScriptedModel(
        fallback_text="Hello, world!", stream_chunk_chars=5, stream_delay_seconds=0.25, sleep=sleep
    )
    *partials, final = await collect(model.generate_stream(request()))
    assert [p.text() for p in partials] == ["Hello", ", wor", "ld!"]
    assert all(p.partial for p in partials)
    assert final == await model.generate(request())
    assert final.partial is False
    assert slept == [0.25, 0.25]


async def test_scripted_stream_sends_calls_and_unchunked_replies_whole() -> None:
    """Function-call replies, and any reply without stream_chunk_chars, are one final item."""
    rules = [
        ScriptedRule(r"weather in (?P<city>\w+)", [ScriptedCall("get_weather", {"city": "{city}"})])
    ]
    chunked = ScriptedModel(rules, stream_chunk_chars=2)
    [calls] = await collect(chunked.generate_stream(request("weather in Paris")))
    assert calls.partial is False
    assert [(c.name, c.args) for c in calls.function_calls()] == [
        ("get_weather", {"city": "Paris"})
    ]
    unchunked = ScriptedModel(fallback_text="no chunks")
    [whole] = await collect(unchunked.generate_stream(request()))
    assert (whole.text(), whole.partial) == ("no chunks", False)


@pytest.mark.parametrize(("chars", "delay"), [(0, 0.0), (-1, 0.0), (3, -0.5)])
def test_scripted_stream_options_are_validated(chars: int, delay: float) -> None:
    """A chunk size below 1 or a negative delay is refused at construction."""
    with pytest.raises(ValueError, match="stream_"):
        ScriptedModel(stream_chunk_chars=chars, stream_delay_seconds=delay)
