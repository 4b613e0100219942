"""ScriptedModel rules, summaries and scripts; ModelRegistry resolution."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from adk_temporal.errors import UnknownModelError
from adk_temporal.models import (
    DEFAULT_FALLBACK_TEXT,
    GeminiModel,
    LlmRequest,
    LlmResponse,
    Model,
    ModelRegistry,
    ScriptedCall,
    ScriptedModel,
    ScriptedRule,
    default_registry,
    weather_model,
    weather_rules,
)


def user(text: str) -> types.Content:
    """A user text turn."""
    return types.Content(role="user", parts=[types.Part(text=text)])


def model_calls(*calls: tuple[str, str, dict[str, Any]]) -> types.Content:
    """A model turn of (id, name, args) function calls."""
    return types.Content(
        role="model",
        parts=[
            types.Part(function_call=types.FunctionCall(id=i, name=n, args=a)) for i, n, a in calls
        ],
    )


def responses(*items: tuple[str, dict[str, Any]]) -> types.Content:
    """A user turn of (name, response) function responses."""
    return types.Content(
        role="user",
        parts=[
            types.Part(function_response=types.FunctionResponse(name=n, response=r))
            for n, r in items
        ],
    )


async def ask(model: ScriptedModel, *contents: types.Content) -> LlmResponse:
    """The model's reply to a conversation."""
    return await model.generate(LlmRequest(model=model.name, contents=list(contents)))


def calls_of(reply: LlmResponse) -> list[tuple[str | None, str | None, dict[str, Any] | None]]:
    """The (id, name, args) of each function call in a reply."""
    return [(c.id, c.name, c.args) for c in reply.function_calls()]


async def test_weather_question_calls_get_weather_with_the_city() -> None:
    """'weather in <city>' becomes get_weather(city) with a deterministic id."""
    reply = await ask(weather_model(), user("What's the weather in Hangzhou?"))
    assert calls_of(reply) == [("call-1", "get_weather", {"city": "Hangzhou"})]
    assert reply.content is not None and reply.content.role == "model"
    assert reply.text() == ""


async def test_two_cities_make_two_parallel_calls() -> None:
    """'weather in <a> and <b>' becomes two get_weather calls in one reply."""
    reply = await ask(weather_model(), user("weather in Paris and New York"))
    assert calls_of(reply) == [
        ("call-1", "get_weather", {"city": "Paris"}),
        ("call-2", "get_weather", {"city": "New York"}),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Buy a weather report for Hangzhou",
        "please buy report for Hangzhou!",
        "BUY A REPORT FOR Hangzhou",
    ],
)
async def test_paid_report_request_calls_buy_weather_report(text: str) -> None:
    """Every phrasing of 'buy (a) (weather) report for <city>' calls buy_weather_report."""
    reply = await ask(weather_model(), user(text))
    assert calls_of(reply) == [("call-1", "buy_weather_report", {"city": "Hangzhou"})]


async def test_update_request_carries_city_and_advice() -> None:
    """'update the report for <city>: <advice>' passes both groups as arguments."""
    reply = await ask(
        weather_model(), user("Update the report for Hangzhou: take an umbrella, it rains.")
    )
    assert calls_of(reply) == [
        (
            "call-1",
            "update_report",
            {"city": "Hangzhou", "advice": "take an umbrella, it rains."},
        )
    ]


@pytest.mark.parametrize("text", ["What are my travel dates?", "Help me plan a trip"])
async def test_travel_requests_call_ask_travel_dates(text: str) -> None:
    """'travel dates' and 'plan a trip' call ask_travel_dates without arguments."""
    reply = await ask(weather_model(), user(text))
    assert calls_of(reply) == [("call-1", "ask_travel_dates", {})]


async def test_call_ids_continue_from_the_conversation() -> None:
    """Ids number on from the calls already in the history, the same on every retry."""
    history = [
        user("weather in Paris and Rome"),
        model_calls(("call-1", "get_weather", {}), ("call-2", "get_weather", {})),
        responses(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})),
        types.Content(role="model", parts=[types.Part(text="ok")]),
        user("weather in Oslo"),
    ]
    model = weather_model()
    first = await ask(model, *history)
    again = await ask(model, *history)
    assert calls_of(first) == [("call-3", "get_weather", {"city": "Oslo"})]
    assert first == again


async def test_function_response_is_summarised_with_the_tool_template() -> None:
    """After a function response the reply is text from the tool's summary template."""
    reply = await ask(
        weather_model(),
        user("weather in Hangzhou"),
        model_calls(("call-1", "get_weather", {"city": "Hangzhou"})),
        responses(("get_weather", {"city": "Hangzhou", "forecast": "sunny, 25°C"})),
    )
    assert reply.text() == "The weather in Hangzhou is sunny, 25°C."
    assert reply.function_calls() == []
    assert reply.finish_reason == "STOP"


async def test_parallel_responses_are_summarised_in_order() -> None:
    """Several responses give one text, each summarised in call order."""
    reply = await ask(
        weather_model(),
        responses(
            ("get_weather", {"city": "Paris", "forecast": "rain"}),
            ("get_weather", {"city": "Rome", "forecast": "sun"}),
        ),
    )
    assert reply.text() == "The weather in Paris is rain. The weather in Rome is sun."


async def test_demo_tool_results_are_summarised() -> None:
    """The weather demo's purchase, update and travel-dates results read as sentences."""
    reply = await ask(
        weather_model(),
        responses(
            ("buy_weather_report", {"city": "Oslo", "artifact": "report.txt", "version": 1}),
            ("update_report", {"status": "updated", "city": "Oslo", "version": 2}),
            ("ask_travel_dates", {"dates": {"start": "2025-05-01", "end": "2025-05-03"}}),
        ),
    )
    assert reply.text() == (
        "Your weather report for Oslo is saved as report.txt (version 1). "
        "The report for Oslo is updated (version 2). "
        "Noted your travel dates: 2025-05-01 to 2025-05-03."
    )


async def test_response_without_template_fields_gets_the_generic_summary() -> None:
    """A response lacking the template's fields, or of an unknown tool, is summarised as JSON."""
    reply = await ask(
        weather_model(),
        responses(
            ("get_weather", {"city": "Paris"}),
            ("ask_travel_dates", {"dates": "soon"}),
            ("lookup", {"hits": 2}),
        ),
    )
    assert reply.text() == (
        'get_weather returned {"city": "Paris"}. '
        'ask_travel_dates returned {"dates": "soon"}. '
        'lookup returned {"hits": 2}.'
    )


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (
            {"status": "waiting for approval", "hint": "Pay 5 USD?"},
            "buy_weather_report is waiting for your approval: Pay 5 USD?",
        ),
        (
            {"error": "tool buy_weather_report requires confirmation, please approve or reject"},
            "buy_weather_report is waiting for your approval.",
        ),
        (
            {"status": "awaiting input", "message": "When do you travel?"},
            "buy_weather_report is waiting for your input: When do you travel?",
        ),
        ({"status": "waiting for travel dates"}, "buy_weather_report is waiting for your input."),
        ({"status": "pending confirmation"}, "buy_weather_report is waiting for your approval."),
        ({"status": "rejected", "city": "Paris"}, "buy_weather_report was rejected."),
        (
            {"error": "tool buy_weather_report call is rejected"},
            "buy_weather_report failed: tool buy_weather_report call is rejected",
        ),
    ],
)
async def test_pending_and_error_responses_say_so(response: dict[str, Any], expected: str) -> None:
    """A paused tool is reported as waiting (approval or input); errors and rejections too."""
    reply = await ask(weather_model(), responses(("buy_weather_report", response)))
    assert reply.text() == expected


async def test_unmatched_text_gets_the_fallback() -> None:
    """Text no rule matches, and an empty conversation, get the fixed fallback text."""
    model = ScriptedModel([], name="scripted:empty")
    assert (await ask(model, user("tell me a joke"))).text() == DEFAULT_FALLBACK_TEXT
    assert (await ask(model)).text() == DEFAULT_FALLBACK_TEXT
    assert "weather" in (await ask(weather_model(), user("hello"))).text()


async def test_callable_summary_and_literal_arguments() -> None:
    """Custom rules keep non-string arguments and may summarise with a function."""
    model = ScriptedModel(
        [ScriptedRule(r"book (?P<n>\d+) seats", [ScriptedCall("book", {"n": "{n}", "vip": True})])],
        summaries={"book": lambda r: f"Booked {len(r['seats'])} seats."},
    )
    reply = await ask(model, user("Book 2 seats please"))
    assert calls_of(reply) == [("call-1", "book", {"n": "2", "vip": True})]
    summary = await ask(model, responses(("book", {"seats": ["1A", "1B"]})))
    assert summary.text() == "Booked 2 seats."


async def test_script_drives_a_multi_turn_conversation() -> None:
    """Script entry i answers the request holding i model turns; rules apply afterwards."""
    model = ScriptedModel(
        weather_rules(),
        script=[
            types.FunctionCall(name="get_weather", args={"city": "Oslo"}),
            "It is cold in Oslo.",
            LlmResponse(error_code="SAFETY", error_message="blocked"),
        ],
    )
    turn1 = await ask(model, user("anything"))
    assert calls_of(turn1) == [("call-1", "get_weather", {"city": "Oslo"})]
    assert turn1.content is not None
    history = [user("anything"), turn1.content, responses(("get_weather", {"t": -3}))]
    turn2 = await ask(model, *history)
    assert turn2.text() == "It is cold in Oslo."
    assert turn2.content is not None
    history += [turn2.content, user("and now?")]
    turn3 = await ask(model, *history)
    assert (turn3.error_code, turn3.error_message) == ("SAFETY", "blocked")
    history += [types.Content(role="model", parts=[types.Part(text="-")]), user("weather in Rome")]
    turn4 = await ask(model, *history)
    assert calls_of(turn4) == [("call-2", "get_weather", {"city": "Rome"})]


def test_rule_template_naming_a_missing_group_is_refused() -> None:
    """A call template that names a group the pattern lacks fails at construction."""
    with pytest.raises(ValueError, match="call get_weather uses \\{town\\} but the pattern"):
        ScriptedRule(r"weather in (?P<city>\w+)", [ScriptedCall("get_weather", {"city": "{town}"})])


def test_registry_prefers_exact_names_then_patterns_in_order() -> None:
    """Exact names win over patterns; among patterns the first registered wins."""
    registry = ModelRegistry()
    registry.register("scripted:*", lambda name: ScriptedModel(name=f"any {name}"))
    registry.register("scripted:weather*", lambda name: ScriptedModel(name=f"later {name}"))
    registry.register("scripted:exact", lambda name: ScriptedModel(name=f"exact {name}"))
    assert registry.resolve("scripted:exact").name == "exact scripted:exact"
    assert registry.resolve("scripted:weather").name == "any scripted:weather"
    assert registry.patterns() == ["scripted:*", "scripted:weather*", "scripted:exact"]


def test_registry_builds_each_name_once() -> None:
    """A resolved model is cached per name; re-registering drops the cache."""
    built: list[str] = []

    def factory(name: str) -> Model:
        built.append(name)
        return ScriptedModel(name=name)

    registry = ModelRegistry()
    registry.register("scripted:*", factory)
    first = registry.resolve("scripted:a")
    assert registry.resolve("scripted:a") is first
    assert registry.resolve("scripted:b") is not first
    registry.register("scripted:*", factory)
    assert registry.resolve("scripted:a") is not first
    assert built == ["scripted:a", "scripted:b", "scripted:a"]


def test_unknown_model_error_names_the_model_and_patterns() -> None:
    """Resolving an unregistered name raises UnknownModelError listing what is registered."""
    registry = ModelRegistry()
    registry.register("gemini-*", GeminiModel)
    registry.register("scripted:weather", weather_model)
    with pytest.raises(UnknownModelError) as caught:
        registry.resolve("gpt-4o")
    assert isinstance(caught.value, LookupError)
    assert str(caught.value) == (
        "no model registered for 'gpt-4o' (registered: 'gemini-*', 'scripted:weather'); "
        "register a factory for it with ModelRegistry.register"
    )
    with pytest.raises(UnknownModelError, match=r"registered: none"):
        ModelRegistry().resolve("gemini-2.5-flash")


def test_default_registry_resolves_gemini_and_the_weather_demo(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """default_registry maps gemini-* to GeminiModel and scripted:weather to the demo model."""
    monkeypatch.setenv("GOOGLE_API_KEY", "env-key-for-test")
    registry = default_registry()
    gemini = registry.resolve("gemini-2.5-flash")
    assert isinstance(gemini, GeminiModel) and gemini.name == "gemini-2.5-flash"
    assert "env-key-for-test" not in repr(gemini)
    scripted = registry.resolve("scripted:weather")
    assert isinstance(scripted, ScriptedModel) and scripted.name == "scripted:weather"
    assert isinstance(scripted, Model)
    with pytest.raises(UnknownModelError, match="'scripted:other'"):
        registry.resolve("scripted:other")


async def test_replies_report_estimated_token_usage() -> None:
    """Every reply reports tokens (a token per four characters of request and reply, rounded
    up), so budgets work offline; a scripted response's own usage stays; it can be off."""
    request = LlmRequest(
        model="scripted", contents=[user("weather in Rome?")], system_instruction="Be brief."
    )
    reply = await ScriptedModel(script=["Sunny."]).generate(request)
    assert reply.usage is not None
    assert (reply.usage.prompt_token_count, reply.usage.candidates_token_count) == (7, 2)
    assert reply.usage.total_token_count == 9
    own = types.GenerateContentResponseUsageMetadata(total_token_count=42)
    kept = await ScriptedModel(script=[LlmResponse(usage=own)]).generate(request)
    assert kept.usage == own
    silent = await ScriptedModel(script=["Sunny."], report_usage=False).generate(request)
    assert silent.usage is None
