"""``ScriptedModel``: a deterministic, offline stand-in for an LLM, for tests and the demo.

It never guesses. Given the same request it gives the same reply, so a retried model
activity or a replayed workflow sees exactly what the first attempt saw:

1. If a ``script`` is given and the conversation holds fewer model turns than the script,
   the next scripted reply is returned (a whole multi-turn conversation in a test).
2. If the last content carries function responses, the reply is text summarising them —
   per-tool templates over the response dict, a generic fallback otherwise, and a plain
   "waiting" sentence when the tool paused (``status`` containing waiting/pending/awaiting,
   or the static confirmation gate's error): for approval when the status mentions approval
   or confirmation, for input otherwise.
3. If the last content is user text matching a rule (regular expression, case-insensitive,
   first rule wins), the reply is the rule's function calls, their string arguments filled
   in from the pattern's named groups. Several calls make one reply of parallel calls.
4. Otherwise the reply is a fixed fallback text.

Each reply reports the tokens it would cost (:func:`estimated_usage`: a token per four
characters of the request and of the reply), so token budgets and compaction can be tried
without a key; ``report_usage=False`` reports none.

Function-call ids are ``call-<n>``, numbered on from the function calls already in the
conversation, so they are unique within it and identical on every retry.

With ``stream_chunk_chars`` set, :meth:`ScriptedModel.generate_stream` yields a text reply in
chunks of that many characters (``stream_delay_seconds`` apart) before the complete reply; a
reply with function calls or an error comes as the complete reply alone.
"""

from __future__ import annotations

import asyncio
import json
import re
import string
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.genai import types

from adk_temporal.models.llm import LlmRequest, LlmResponse

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_FALLBACK_TEXT",
    "ScriptedCall",
    "ScriptedModel",
    "ScriptedReply",
    "ScriptedRule",
    "SummaryTemplate",
    "estimated_usage",
    "weather_model",
    "weather_rules",
    "weather_summaries",
]

DEFAULT_FALLBACK_TEXT = "Sorry, I can only help with what my script covers."
"""The reply of a ScriptedModel when no script entry, response or rule applies."""

SummaryTemplate = str | Callable[[dict[str, Any]], str]
"""How to summarise one tool's response: a ``str.format`` template over the response dict,
or a function of it."""

ScriptedReply = str | types.FunctionCall | Sequence[types.FunctionCall] | LlmResponse
"""One scripted model turn: text, one call, parallel calls, or a complete response."""

# Words in a response's "status" that mark a tool paused for a human, the words that say the
# human is asked to approve (any other pause waits for input), and the phrase of the runtime's
# static confirmation gate ("tool X requires confirmation, please approve or reject").
_PENDING_STATUS_WORDS = ("waiting", "pending", "awaiting")
_APPROVAL_WORDS = ("approv", "confirm")
_GATE_PHRASE = "requires confirmation"


@dataclass(frozen=True)
class ScriptedCall:
    """One function call a rule produces.

    Args:
        name: The function to call.
        args: Its arguments; string values are ``str.format`` templates over the rule's
            named groups (``{"city": "{city}"}``), other values are passed as they are.
    """

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ScriptedRule:
    """Map user text matching ``pattern`` (searched, case-insensitive) to function calls.

    Args:
        pattern: A regular expression; its named groups feed the call templates.
        calls: The calls of the reply, in order; more than one makes parallel calls.

    Raises:
        ValueError: A call template names a group the pattern does not define.
    """

    pattern: str
    calls: Sequence[ScriptedCall]
    _regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        regex = re.compile(self.pattern, re.IGNORECASE)
        for call in self.calls:
            for value in call.args.values():
                if not isinstance(value, str):
                    continue
                for _, group, _, _ in string.Formatter().parse(value):
                    if group is not None and group not in regex.groupindex:
                        raise ValueError(
                            f"rule {self.pattern!r}: call {call.name} uses {{{group}}} but the "
                            f"pattern has no named group {group!r}"
                        )
        object.__setattr__(self, "calls", tuple(self.calls))
        object.__setattr__(self, "_regex", regex)

    def match(self, text: str) -> list[tuple[str, dict[str, Any]]] | None:
        """The ``(name, args)`` of each call when ``text`` matches, else ``None``."""
        found = self._regex.search(text)
        if found is None:
            return None
        groups = {k: (v or "").strip() for k, v in found.groupdict().items()}
        return [
            (
                call.name,
                {
                    key: value.format_map(groups) if isinstance(value, str) else value
                    for key, value in call.args.items()
                },
            )
            for call in self.calls
        ]


class ScriptedModel:
    """A model that answers from a script and rules; see the module docstring for the order.

    Args:
        rules: Tried in order against the latest user text; the first match wins.
        name: The model name (registries usually pass ``scripted:<scenario>``).
        summaries: Per-tool templates for the text that follows a function response.
        script: Replies by model turn: entry ``i`` answers the request that already holds
            ``i`` model contents. Rules apply once the script is used up.
        fallback_text: The reply when nothing else applies.
        stream_chunk_chars: How many characters of a text reply each streamed chunk holds;
            ``None`` streams the complete reply only.
        stream_delay_seconds: The pause between two streamed chunks.
        sleep: How to pause; tests pass a fake to stream without waiting.
        report_usage: Give each reply the token usage :func:`estimated_usage` counts, as a
            real model reports it, so token budgets and compaction work offline.

    Raises:
        ValueError: ``stream_chunk_chars`` is below 1 or ``stream_delay_seconds`` negative.
    """

    def __init__(
        self,
        rules: Sequence[ScriptedRule] = (),
        *,
        name: str = "scripted",
        summaries: Mapping[str, SummaryTemplate] | None = None,
        script: Sequence[ScriptedReply] = (),
        fallback_text: str = DEFAULT_FALLBACK_TEXT,
        stream_chunk_chars: int | None = None,
        stream_delay_seconds: float = 0.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        report_usage: bool = True,
    ) -> None:
        if stream_chunk_chars is not None and stream_chunk_chars < 1:
            raise ValueError(
                f"stream_chunk_chars must be at least 1 or None, got {stream_chunk_chars}"
            )
        if stream_delay_seconds < 0:
            raise ValueError(
                f"stream_delay_seconds must not be negative, got {stream_delay_seconds}"
            )
        self._stream_chunk_chars = stream_chunk_chars
        self._stream_delay_seconds = stream_delay_seconds
        self._sleep = sleep
        self._name = name
        self._rules = tuple(rules)
        self._summaries = dict(summaries or {})
        self._script = tuple(script)
        self._fallback_text = fallback_text
        self._report_usage = report_usage

    @property
    def name(self) -> str:
        """The model name."""
        return self._name

    def __repr__(self) -> str:
        return f"ScriptedModel({self._name!r}, rules={len(self._rules)})"

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """Reply to ``request`` deterministically.

        Args:
            request: The conversation; its contents are read (and its system instruction,
                for the usage).

        Returns:
            The scripted reply, a summary of function responses, the matching rule's
            function calls, or the fallback text; with ``report_usage``, carrying the tokens
            :func:`estimated_usage` counts unless a scripted response brought its own.
        """
        reply = self._reply(request)
        if self._report_usage and reply.usage is None:
            reply = reply.model_copy(update={"usage": estimated_usage(request, reply)})
        return reply

    def _reply(self, request: LlmRequest) -> LlmResponse:
        contents = request.contents
        # Counting over the whole conversation only when the answer needs it keeps text
        # replies as cheap at turn 1,000 as at turn 1.
        if self._script:
            model_turns = sum(1 for c in contents if c.role == "model")
            if model_turns < len(self._script):
                return _scripted_reply(self._script[model_turns], _first_call(contents))
        last = contents[-1] if contents else None
        responses = [p.function_response for p in _parts(last) if p.function_response]
        if responses:
            return _text_reply(" ".join(self._summarise(r) for r in responses))
        if last is not None and last.role == "user":
            text = "".join(p.text for p in _parts(last) if p.text and not p.thought)
            for rule in self._rules:
                calls = rule.match(text)
                if calls is not None:
                    return _calls_reply(
                        [types.FunctionCall(name=n, args=a) for n, a in calls],
                        _first_call(contents),
                    )
        return _text_reply(self._fallback_text)

    async def generate_stream(self, request: LlmRequest) -> AsyncGenerator[LlmResponse, None]:
        """Reply to ``request`` as :meth:`generate` does, in text chunks when configured.

        Args:
            request: The conversation; only its contents are read.

        Yields:
            For a text reply with ``stream_chunk_chars`` set, partial responses of that many
            characters each, then the complete reply (``partial=False``), equal to what
            :meth:`generate` returns. Other replies yield only the complete reply.
        """
        reply = await self.generate(request)
        size = self._stream_chunk_chars
        text = reply.text()
        # Calls and errors are acted on as a whole, so streaming them in pieces would only
        # show a consumer something it cannot use yet.
        if size is not None and text and not reply.function_calls() and not reply.error_code:
            for start in range(0, len(text), size):
                if start and self._stream_delay_seconds:
                    await self._sleep(self._stream_delay_seconds)
                yield LlmResponse(
                    content=types.Content(
                        role="model", parts=[types.Part(text=text[start : start + size])]
                    ),
                    partial=True,
                )
        yield reply

    def _summarise(self, response: types.FunctionResponse) -> str:
        name = response.name or "the tool"
        data = dict(response.response or {})
        status = str(data.get("status", "")).lower()
        error = data.get("error")
        gated = _GATE_PHRASE in str(error or "").lower()
        if gated or any(word in status for word in _PENDING_STATUS_WORDS):
            approval = gated or any(word in status for word in _APPROVAL_WORDS)
            detail = data.get("message") or data.get("hint")
            return f"{name} is waiting for your {'approval' if approval else 'input'}" + (
                f": {detail}" if detail else "."
            )
        if error is not None:
            return f"{name} failed: {error}"
        if "reject" in status:
            return f"{name} was rejected."
        template = self._summaries.get(name)
        if template is not None:
            try:
                return template(data) if callable(template) else template.format_map(data)
            except (KeyError, IndexError, TypeError, ValueError):
                pass  # The response lacks a field the template names: use the generic text.
        return f"{name} returned {json.dumps(data, ensure_ascii=False, default=str)}."


CHARS_PER_TOKEN = 4
"""How many characters :func:`estimated_usage` counts as one token (Gemini's rule of thumb)."""


def _chars(content: types.Content) -> int:
    """The characters a model would read of ``content``: text, and calls and responses as
    their name and JSON."""
    total = 0
    for part in content.parts or ():
        total += len(part.text or "")
        for named in (part.function_call, part.function_response):
            if named is not None:
                body = named.args if isinstance(named, types.FunctionCall) else named.response
                total += len(named.name or "") + len(json.dumps(body or {}, default=str))
    return total


def estimated_usage(
    request: LlmRequest, reply: LlmResponse
) -> types.GenerateContentResponseUsageMetadata:
    """The tokens a reply is reported to cost offline: a token per :data:`CHARS_PER_TOKEN`
    characters (rounded up) of the request (system instruction included) and of the reply."""
    prompt = len(request.system_instruction or "") + sum(_chars(c) for c in request.contents)
    candidates = _chars(reply.content) if reply.content is not None else 0
    prompt_tokens = -(-prompt // CHARS_PER_TOKEN)
    candidate_tokens = -(-candidates // CHARS_PER_TOKEN)
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt_tokens,
        candidates_token_count=candidate_tokens,
        total_token_count=prompt_tokens + candidate_tokens,
    )


def _first_call(contents: Sequence[types.Content]) -> int:
    """The number the next call id gets: one more than the calls so far."""
    return 1 + sum(1 for c in contents for p in c.parts or () if p.function_call is not None)


def _parts(content: types.Content | None) -> list[types.Part]:
    return list(content.parts or ()) if content is not None else []


def _text_reply(text: str) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        finish_reason="STOP",
    )


def _calls_reply(calls: Sequence[types.FunctionCall], first_call: int) -> LlmResponse:
    numbered = [
        call if call.id else call.model_copy(update={"id": f"call-{first_call + i}"})
        for i, call in enumerate(calls)
    ]
    return LlmResponse(
        content=types.Content(
            role="model", parts=[types.Part(function_call=call) for call in numbered]
        ),
        finish_reason="STOP",
    )


def _scripted_reply(entry: ScriptedReply, first_call: int) -> LlmResponse:
    if isinstance(entry, LlmResponse):
        return entry
    if isinstance(entry, str):
        return _text_reply(entry)
    if isinstance(entry, types.FunctionCall):
        return _calls_reply([entry], first_call)
    return _calls_reply(list(entry), first_call)


def weather_rules() -> list[ScriptedRule]:
    """The rules of the weather demo: forecasts, a paid report, its update, travel dates."""
    return [
        ScriptedRule(
            r"update (?:the )?report for (?P<city>[^:]+?)\s*:\s*(?P<advice>.+)",
            [ScriptedCall("update_report", {"city": "{city}", "advice": "{advice}"})],
        ),
        ScriptedRule(
            r"buy (?:an? )?(?:weather )?report for (?P<city>[^?.!,]+)",
            [ScriptedCall("buy_weather_report", {"city": "{city}"})],
        ),
        ScriptedRule(r"travel dates|plan a trip", [ScriptedCall("ask_travel_dates")]),
        ScriptedRule(
            r"weather in (?P<first>[^?.!,]+?) and (?P<second>[^?.!,]+)",
            [
                ScriptedCall("get_weather", {"city": "{first}"}),
                ScriptedCall("get_weather", {"city": "{second}"}),
            ],
        ),
        ScriptedRule(
            r"weather in (?P<city>[^?.!,]+)", [ScriptedCall("get_weather", {"city": "{city}"})]
        ),
    ]


def weather_summaries() -> dict[str, SummaryTemplate]:
    """Summary templates of the weather demo's tools, keyed by tool name."""
    return {
        "get_weather": "The weather in {city} is {forecast}.",
        "buy_weather_report": "Your weather report for {city} is saved as {artifact} "
        "(version {version}).",
        "update_report": "The report for {city} is updated (version {version}).",
        "ask_travel_dates": _travel_dates_summary,
    }


def _travel_dates_summary(response: dict[str, Any]) -> str:
    # A KeyError or TypeError (dates missing or not a mapping) selects the generic summary.
    dates = response["dates"]
    return f"Noted your travel dates: {dates['start']} to {dates['end']}."


def weather_model(name: str = "scripted:weather") -> ScriptedModel:
    """The offline model of the weather demo; usable directly as a registry factory."""
    return ScriptedModel(
        weather_rules(),
        name=name,
        summaries=weather_summaries(),
        fallback_text=(
            "I can tell you the weather in a city, sell you a weather report for a city, "
            "update that report, or plan your travel dates."
        ),
        # Invocations started with stream=True show the reply being written, as a real
        # model's would be; the others get it whole and never wait.
        stream_chunk_chars=12,
        stream_delay_seconds=0.02,
    )
