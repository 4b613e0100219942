"""GeminiModel through the real google-genai client against a local FakeGeminiServer."""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import aclosing
from typing import Any

import pytest
from google import genai
from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.errors import ModelRequestError, ModelUnavailableError
from adk_temporal.models import GeminiModel, LlmRequest, LlmResponse
from adk_temporal.testing.fake_gemini import FakeGeminiServer
from adk_temporal.tools import FunctionTool

from .conftest import WorkerFactory, gemini_models

API_KEY = "AIza-test-secret-key-0123456789"
MODEL = "gemini-2.5-flash"


def get_weather(city: str, days: int = 1) -> dict[str, Any]:
    """Get the weather for a city.

    Args:
        city: The city to look up.
        days: How many days to forecast.
    """
    return {"city": city}


@pytest.fixture
def server() -> Iterator[FakeGeminiServer]:
    """A fresh fake Gemini server for one test."""
    with FakeGeminiServer() as fake:
        yield fake


@pytest.fixture
def model(server: FakeGeminiServer) -> GeminiModel:
    """A GeminiModel pointed at the fake server."""
    return GeminiModel(MODEL, api_key=API_KEY, base_url=server.base_url)


def user(text: str) -> types.Content:
    """A user text turn."""
    return types.Content(role="user", parts=[types.Part(text=text)])


def request(*contents: types.Content, **fields: Any) -> LlmRequest:
    """An LlmRequest for MODEL."""
    return LlmRequest(model=MODEL, contents=list(contents) or [user("hi")], **fields)


async def test_request_carries_history_instruction_and_tool_schemas(
    server: FakeGeminiServer, model: GeminiModel
) -> None:
    """The HTTP body holds the whole history, the system instruction and declared tool schemas."""
    server.enqueue_text("It is sunny.")
    history = [
        user("weather in Hangzhou?"),
        types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        id="call-1", name="get_weather", args={"city": "Hangzhou"}
                    )
                )
            ],
        ),
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id="call-1", name="get_weather", response={"forecast": "sunny"}
                    )
                )
            ],
        ),
    ]
    await model.generate(
        request(
            *history,
            system_instruction="You are a weather agent.",
            tools=[FunctionTool(get_weather).declaration()],
            generation_config=types.GenerateContentConfig(temperature=0.25),
        )
    )
    [recorded] = server.requests
    assert recorded.path == f"/v1/models/{MODEL}:generateContent"
    assert recorded.model == MODEL and recorded.stream is False
    body = recorded.body
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    assert body["contents"][0]["parts"] == [{"text": "weather in Hangzhou?"}]
    assert body["contents"][1]["parts"][0]["functionCall"]["args"] == {"city": "Hangzhou"}
    assert body["contents"][2]["parts"][0]["functionResponse"]["response"] == {"forecast": "sunny"}
    assert body["systemInstruction"]["parts"] == [{"text": "You are a weather agent."}]
    assert body["generationConfig"]["temperature"] == 0.25
    [declaration] = body["tools"][0]["functionDeclarations"]
    assert declaration["name"] == "get_weather"
    assert declaration["description"] == "Get the weather for a city."
    schema = declaration.get("parametersJsonSchema", declaration.get("parameters_json_schema"))
    assert schema["required"] == ["city"]
    assert schema["properties"]["city"] == {"type": "string", "description": "The city to look up."}
    assert schema["properties"]["days"]["default"] == 1


async def test_text_reply_parses_with_usage(server: FakeGeminiServer, model: GeminiModel) -> None:
    """A text candidate becomes content, finish reason and usage of the LlmResponse."""
    server.enqueue_response(
        {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": "Sunny in Hangzhou."}]},
                    "finishReason": "STOP",
                }
            ],
            "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 4},
        }
    )
    reply = await model.generate(request())
    assert reply.text() == "Sunny in Hangzhou."
    assert reply.finish_reason == "STOP"
    assert reply.error_code is None
    assert reply.usage is not None and reply.usage.prompt_token_count == 12


async def test_single_function_call_parses(server: FakeGeminiServer, model: GeminiModel) -> None:
    """One functionCall part becomes one FunctionCall with its arguments."""
    server.enqueue_function_call("get_weather", {"city": "Hangzhou"})
    reply = await model.generate(request())
    [call] = reply.function_calls()
    assert (call.name, call.args) == ("get_weather", {"city": "Hangzhou"})
    assert reply.content is not None and reply.content.role == "model"


async def test_parallel_function_calls_parse_in_order(
    server: FakeGeminiServer, model: GeminiModel
) -> None:
    """Several functionCall parts in one candidate become parallel calls, in order."""
    server.enqueue_function_calls(
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]
    )
    reply = await model.generate(request())
    assert [(c.name, c.args) for c in reply.function_calls()] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Rome"}),
    ]


@pytest.mark.parametrize(
    ("status", "message"),
    [(429, "Resource has been exhausted (e.g. check quota)."), (503, "The model is overloaded.")],
)
async def test_rate_limit_and_server_errors_are_unavailable_after_one_attempt(
    server: FakeGeminiServer, model: GeminiModel, status: int, message: str
) -> None:
    """429 and 503 raise ModelUnavailableError after exactly one HTTP attempt (no SDK retry)."""
    server.enqueue_error(status, message)
    server.enqueue_text("a retry would have consumed this")
    with pytest.raises(ModelUnavailableError) as caught:
        await model.generate(request())
    assert (caught.value.status, caught.value.message) == (status, message)
    assert str(caught.value) == f"model unavailable (HTTP {status}): {message}"
    assert len(server.requests) == 1
    assert server.pending() == 1


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "Invalid JSON payload received."),
        (401, "API key not valid."),
        (403, "Permission denied."),
        (404, "models/gemini-nope is not found."),
        (422, "Unprocessable."),
    ],
)
async def test_client_errors_are_request_errors(
    server: FakeGeminiServer, model: GeminiModel, status: int, message: str
) -> None:
    """4xx other than 408/429 raise ModelRequestError carrying status and API message."""
    server.enqueue_error(status, message)
    with pytest.raises(ModelRequestError) as caught:
        await model.generate(request())
    assert (caught.value.status, caught.value.message) == (status, message)
    assert str(caught.value) == f"model request failed with HTTP {status}: {message}"
    assert len(server.requests) == 1


async def test_connection_refused_is_unavailable() -> None:
    """A transport failure (nothing listening) raises ModelUnavailableError without status."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = GeminiModel(MODEL, api_key=API_KEY, base_url=f"http://127.0.0.1:{port}")
    with pytest.raises(ModelUnavailableError) as caught:
        await model.generate(request())
    assert caught.value.status is None
    assert str(caught.value).startswith("model unavailable (transport error): ConnectError")


async def test_timeout_is_unavailable(server: FakeGeminiServer) -> None:
    """A reply slower than the model's timeout raises ModelUnavailableError without status."""
    server.enqueue_response({"candidates": []}, delay=5.0)
    model = GeminiModel(MODEL, api_key=API_KEY, base_url=server.base_url, timeout=0.2)
    with pytest.raises(ModelUnavailableError) as caught:
        await model.generate(request())
    assert caught.value.status is None
    assert "Timeout" in caught.value.message


async def test_empty_queue_reports_the_test_mistake(
    server: FakeGeminiServer, model: GeminiModel
) -> None:
    """A call with no scripted reply gets HTTP 500 naming the problem."""
    with pytest.raises(ModelUnavailableError) as caught:
        await model.generate(request())
    assert caught.value.status == 500
    assert caught.value.message == (
        "FakeGeminiServer has no scripted reply left for request #1 "
        f"(POST /v1/models/{MODEL}:generateContent); enqueue one before calling the model"
    )


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        (
            {"promptFeedback": {"blockReason": "SAFETY", "blockReasonMessage": "unsafe prompt"}},
            "SAFETY",
            "the prompt was blocked (SAFETY): unsafe prompt",
        ),
        ({"candidates": []}, "EMPTY_RESPONSE", "the model returned no candidates"),
        (
            {"candidates": [{"finishReason": "SAFETY"}]},
            "SAFETY",
            "the model stopped the reply (SAFETY): no details given",
        ),
        (
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [{"text": "partial"}]},
                        "finishReason": "RECITATION",
                    }
                ]
            },
            "RECITATION",
            "the model stopped the reply (RECITATION): no details given",
        ),
        (
            {"candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "STOP"}]},
            "EMPTY_RESPONSE",
            "the model returned a candidate without content",
        ),
    ],
)
async def test_blocked_or_empty_candidates_are_error_responses(
    server: FakeGeminiServer, model: GeminiModel, body: dict[str, Any], code: str, message: str
) -> None:
    """Blocked prompts and stopped or empty candidates return error fields, not exceptions."""
    server.enqueue_response(body)
    reply = await model.generate(request())
    assert (reply.error_code, reply.error_message) == (code, message)
    assert reply.content is None


async def test_api_key_never_reaches_bodies_or_serialised_objects(
    server: FakeGeminiServer, model: GeminiModel
) -> None:
    """The key travels only in the auth header: never in bodies, recordings or dumps."""
    server.enqueue_function_call("get_weather", {"city": "Hangzhou"})
    llm_request = request(tools=[FunctionTool(get_weather).declaration()])
    reply = await model.generate(llm_request)
    [recorded] = server.requests
    assert API_KEY not in json.dumps(recorded.body)
    assert API_KEY not in recorded.path
    assert API_KEY not in json.dumps(recorded.headers)
    assert "x-goog-api-key" not in recorded.headers
    assert API_KEY not in llm_request.model_dump_json()
    assert API_KEY not in reply.model_dump_json()
    assert repr(model) == f"GeminiModel('{MODEL}')"


async def test_api_version_and_environment_key(
    server: FakeGeminiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key may come from GOOGLE_API_KEY, and api_version selects the path version."""
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", API_KEY)
    model = GeminiModel(MODEL, base_url=server.base_url, api_version="v1beta")
    server.enqueue_text("ok")
    assert (await model.generate(request())).text() == "ok"
    assert server.requests[0].path == f"/v1beta/models/{MODEL}:generateContent"


def test_missing_credentials_and_conflicting_arguments_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without any key or Vertex configuration, and with client plus settings, init fails."""
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="No API key was provided"):
        GeminiModel(MODEL)
    client = genai.Client(api_key=API_KEY)
    with pytest.raises(ValueError, match="pass either client or api_key"):
        GeminiModel(MODEL, client=client, base_url="http://127.0.0.1:1")


async def test_given_client_is_used(server: FakeGeminiServer) -> None:
    """A ready genai.Client is used as configured."""
    client = genai.Client(api_key=API_KEY, http_options=types.HttpOptions(base_url=server.base_url))
    server.enqueue_text("from the given client")
    reply = await GeminiModel(MODEL, client=client).generate(request())
    assert reply == LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="from the given client")]),
        finish_reason="STOP",
    )


async def test_fake_server_streams_sse_chunks(server: FakeGeminiServer) -> None:
    """streamGenerateContent?alt=sse is answered with one data event per scripted chunk."""
    client = genai.Client(api_key=API_KEY, http_options=types.HttpOptions(base_url=server.base_url))
    server.enqueue_stream(
        [
            {"candidates": [{"content": {"role": "model", "parts": [{"text": "Sun"}]}}]},
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [{"text": "ny."}]},
                        "finishReason": "STOP",
                    }
                ]
            },
        ]
    )
    chunks = [
        chunk.text
        async for chunk in await client.aio.models.generate_content_stream(
            model=MODEL, contents="weather?"
        )
    ]
    assert chunks == ["Sun", "ny."]
    [recorded] = server.requests
    assert recorded.stream is True
    assert recorded.path == f"/v1/models/{MODEL}:streamGenerateContent?alt=sse"


async def test_streamed_chunks_arrive_in_order_and_final_equals_generate(
    server: FakeGeminiServer, model: GeminiModel
) -> None:
    """generate_stream yields each SSE text chunk in order, then generate()'s reply for it."""
    server.enqueue_text_stream("Sunny in Hangzhou.", chunk_chars=5, usage=(12, 4))
    server.enqueue_text("Sunny in Hangzhou.", usage=(12, 4))
    *partials, final = [item async for item in model.generate_stream(request())]
    assert [(p.text(), p.partial) for p in partials] == [
        ("Sunny", True),
        (" in H", True),
        ("angzh", True),
        ("ou.", True),
    ]
    assert final.partial is False
    assert final == await model.generate(request())
    assert final.usage is not None and final.usage.total_token_count == 16
    streamed, whole = server.requests
    assert streamed.stream is True and whole.stream is False
    assert streamed.path == f"/v1/models/{MODEL}:streamGenerateContent?alt=sse"
    assert streamed.body == whole.body


async def test_streamed_function_calls_aggregate_like_generate(
    server: FakeGeminiServer, model: GeminiModel
) -> None:
    """Text and calls spread over SSE events join into generate()'s reply for the same body."""
    calls = [
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
        {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}},
    ]

    def event(parts: list[dict[str, Any]], **candidate: Any) -> dict[str, Any]:
        return {"candidates": [{"content": {"role": "model", "parts": parts}, **candidate}]}

    server.enqueue_stream(
        [
            event([{"text": "Checking "}]),
            event([{"text": "both."}, calls[0]]),
            event([calls[1]], finishReason="STOP"),
        ],
        delay_seconds=0.01,
    )
    server.enqueue_response(event([{"text": "Checking both."}, *calls], finishReason="STOP"))
    items = [item async for item in model.generate_stream(request())]
    assert [i.text() for i in items if i.partial] == ["Checking ", "both."]
    assert items[-1] == await model.generate(request())
    assert [c.args for c in items[-1].function_calls()] == [{"city": "Paris"}, {"city": "Rome"}]


async def test_first_chunk_arrives_while_the_server_holds_the_last(
    server: FakeGeminiServer, model: GeminiModel
) -> None:
    """A chunk reaches the caller as soon as it is sent, not when the whole reply is done."""
    release_last = threading.Event()
    server.enqueue_text_stream("abcdef", chunk_chars=2, hold_last=release_last)
    async with aclosing(model.generate_stream(request())) as stream:
        first = await anext(stream)
        assert (first.text(), first.partial) == ("ab", True)
        # The server cannot have sent the last event: it waits for release_last.
        assert server.events_sent < 3
        release_last.set()
        rest = [item async for item in stream]
    assert [r.text() for r in rest] == ["cd", "ef", "abcdef"]
    assert server.events_sent == 3


class _LateBooks:
    """The server's lock, taken late by the server's threads: a thread preempted under load
    before it updates what it sent. The test's own thread takes it at once."""

    def __init__(self, reader: int) -> None:
        self._lock = threading.Lock()
        self._reader = reader

    def __enter__(self) -> None:
        if threading.get_ident() != self._reader:
            time.sleep(0.3)
        self._lock.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self._lock.release()


async def test_an_event_is_counted_before_the_client_can_read_it(
    server: FakeGeminiServer, model: GeminiModel
) -> None:
    """A client that has read the whole stream finds every event counted, however late the
    server's thread gets to its books: the race that failed the test above once under load
    (the client read the last event before the server counted it)."""
    server._state.lock = _LateBooks(threading.get_ident())  # type: ignore[assignment]
    server.enqueue_text_stream("abcdef", chunk_chars=2)
    items = [item async for item in model.generate_stream(request())]
    assert [i.text() for i in items] == ["ab", "cd", "ef", "abcdef"]
    assert server.events_sent == 3


@pytest.mark.parametrize(
    ("status", "expected"),
    [(429, ModelUnavailableError), (503, ModelUnavailableError), (400, ModelRequestError)],
)
async def test_stream_error_status_is_typed_after_one_attempt(
    server: FakeGeminiServer, model: GeminiModel, status: int, expected: type[Exception]
) -> None:
    """An error status from streamGenerateContent raises the typed error, with no SDK retry."""
    server.enqueue_error(status, "streaming refused")
    server.enqueue_text("a retry would have consumed this")
    with pytest.raises(expected) as caught:
        [item async for item in model.generate_stream(request())]
    assert isinstance(caught.value, ModelUnavailableError | ModelRequestError)
    assert (caught.value.status, caught.value.message) == (status, "streaming refused")
    assert len(server.requests) == 1 and server.pending() == 1


async def test_error_event_mid_stream_is_typed(
    server: FakeGeminiServer, model: GeminiModel
) -> None:
    """An error event after a chunk raises ModelUnavailableError once that chunk was yielded."""
    server.enqueue_stream(
        [
            {"candidates": [{"content": {"role": "model", "parts": [{"text": "Sun"}]}}]},
            {"error": {"code": 503, "message": "overloaded mid-stream", "status": "UNAVAILABLE"}},
        ]
    )
    received: list[LlmResponse] = []
    with pytest.raises(ModelUnavailableError) as caught:
        async for item in model.generate_stream(request()):
            received.append(item)
    assert [r.text() for r in received] == ["Sun"]
    assert caught.value.status == 503


@pytest.mark.parametrize("close_first", [True, False], ids=["closed", "left-open"])
async def test_a_closed_model_leaves_its_client_nothing_to_close_when_collected(
    server: FakeGeminiServer, close_first: bool
) -> None:
    """Closed, the client's pools are shut and its ``__del__`` schedules no ``aclose`` task
    on whatever loop collects it; left open (the control), it does."""
    holder = [GeminiModel(MODEL, api_key=API_KEY, base_url=server.base_url)]
    server.enqueue_text("hello")
    assert (await holder[0].generate(request())).content is not None
    if close_first:
        await holder[0].aclose()
    # Earlier tests' garbage is collected (and closed) first, so only this model counts.
    await asyncio.gather(*_tasks_made_dropping([]))
    scheduled = _tasks_made_dropping(holder)
    await asyncio.gather(*scheduled)
    assert bool(scheduled) is not close_first


def _tasks_made_dropping(holder: list[Any]) -> set[asyncio.Task[Any]]:
    """The tasks created on the running loop by dropping ``holder``'s models and collecting."""
    before = asyncio.all_tasks()
    holder.clear()
    gc.collect()
    return asyncio.all_tasks() - before


async def test_closing_a_model_leaves_a_client_passed_in_open(server: FakeGeminiServer) -> None:
    client = genai.Client(
        api_key=API_KEY,
        http_options=types.HttpOptions(
            base_url=server.base_url, retry_options=types.HttpRetryOptions(attempts=1)
        ),
    )
    model = GeminiModel(MODEL, client=client)
    server.enqueue_text("one")
    await model.generate(request())
    await model.aclose()
    server.enqueue_text("two")
    reply = await GeminiModel(MODEL, client=client).generate(request())
    assert reply.content is not None and reply.content.parts
    assert reply.content.parts[0].text == "two"
    await client.aio.aclose()


async def test_workers_sharing_models_close_them_when_the_last_one_stops(
    run_worker: WorkerFactory, server: FakeGeminiServer
) -> None:
    """Two workers share one registry: the first to stop leaves the model serving the
    other's runs; the last to stop closes it, and the registry builds a new one next."""
    models = gemini_models(server)
    model = models.resolve(MODEL)
    server.answer_by_default("fine")
    agent = Agent("assistant", MODEL, "Answer.")
    async with run_worker([agent], models=models) as staying:
        async with run_worker([agent], models=models) as leaving:
            first = await leaving.adk.start("models", "u", "s-1", "assistant", "hi")
            assert (await first.result()).final_text == "fine"
        assert models.resolve(MODEL) is model
        second = await staying.adk.start("models", "u", "s-2", "assistant", "hi")
        assert (await second.result()).final_text == "fine"
    assert models.resolve(MODEL) is not model
    await asyncio.gather(*_tasks_made_dropping([]))
    holder = [model]
    del model
    assert not _tasks_made_dropping(holder)
