"""ADK's eval sets: the models of ``*.evalset.json`` files and old ``*.test.json`` files.

The models have the shape and JSON names of google-adk 2.13's ``google/adk/evaluation/``
(``eval_set.py``, ``eval_case.py``, ``common.py``: camelCase aliases, snake_case accepted,
unknown keys refused where ADK refuses them), so a file ADK reads is read here and a file
written here is read by ADK (``tests/integration/test_eval_adk_parity.py`` has ADK's own
``EvalSet`` parse one). Old test files — a list of ``{"query", "expected_tool_use",
"reference"}`` turns — are converted as ADK's ``local_eval_sets_manager.py`` converts them.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any, TypeAlias

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from ..errors import AdkRequestError

__all__ = [
    "EvalCase",
    "EvalSet",
    "EvalSetError",
    "IntermediateData",
    "Invocation",
    "InvocationEvent",
    "InvocationEvents",
    "SessionInput",
    "load_eval_set",
    "parse_eval_set_arg",
    "tool_calls",
]


class EvalSetError(AdkRequestError, ValueError):
    """An eval set, test file or criteria file cannot be read as ADK's format."""


class _EvalModel(BaseModel):
    """ADK's ``EvalBaseModel``: camelCase on the wire, snake_case accepted, no extra keys."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        arbitrary_types_allowed=True,
    )


class IntermediateData(_EvalModel):
    """What an agent did on the way to its answer, in the older, explicit form."""

    tool_uses: list[types.FunctionCall] = Field(default_factory=list)
    tool_responses: list[types.FunctionResponse] = Field(default_factory=list)
    intermediate_responses: list[tuple[str, list[types.Part]]] = Field(default_factory=list)


class InvocationEvent(_EvalModel):
    """One event of an invocation as ADK's eval keeps it (ADK ignores unknown keys here)."""

    model_config = ConfigDict(extra="ignore")

    author: str
    content: types.Content | None = None
    grounding_metadata: types.GroundingMetadata | None = None
    usage_metadata: types.GenerateContentResponseUsageMetadata | None = None
    model_version: str | None = None


class InvocationEvents(_EvalModel):
    """An invocation's events, the form ADK writes for inferences and captured sessions."""

    invocation_events: list[InvocationEvent] = Field(default_factory=list)


IntermediateDataType: TypeAlias = IntermediateData | InvocationEvents
"""Either form of an invocation's intermediate data."""


class Invocation(_EvalModel):
    """One turn: the user's content, the final response and what happened in between."""

    invocation_id: str = ""
    user_content: types.Content
    final_response: types.Content | None = None
    intermediate_data: IntermediateDataType | None = None
    creation_timestamp: float = 0.0
    duration: float | None = None
    model_duration: float | None = None
    tool_duration: float | None = None
    rubrics: list[dict[str, Any]] | None = None
    app_details: dict[str, Any] | None = None


class SessionInput(_EvalModel):
    """The session an eval case runs in: app, user, optional fixed id and initial state."""

    model_config = ConfigDict(extra="allow")

    app_name: str
    user_id: str
    session_id: str | None = None
    state: dict[str, Any] = Field(default_factory=dict)


class EvalCase(_EvalModel):
    """One eval case: a static conversation (or a scenario for ADK's user simulator)."""

    model_config = ConfigDict(extra="allow")

    eval_id: str
    conversation: list[Invocation] | None = None
    conversation_scenario: dict[str, Any] | None = None
    session_input: SessionInput | None = None
    creation_timestamp: float = 0.0
    rubrics: list[dict[str, Any]] | None = None
    final_session_state: dict[str, Any] | None = Field(default_factory=dict)

    @model_validator(mode="after")
    def _conversation_xor_scenario(self) -> EvalCase:
        # ADK's own rule (eval_case.py ensure_conversation_xor_conversation_scenario).
        if (self.conversation is None) == (self.conversation_scenario is None):
            raise ValueError(
                "Exactly one of conversation and conversation_scenario must be provided in "
                "an EvalCase."
            )
        return self


class EvalSet(BaseModel):
    """A set of eval cases (ADK's ``EvalSet``: snake_case keys, as ADK writes them)."""

    eval_set_id: str
    name: str | None = None
    description: str | None = None
    eval_cases: list[EvalCase]
    creation_timestamp: float = 0.0


def tool_calls(data: IntermediateDataType | None) -> list[types.FunctionCall]:
    """Every tool call of an invocation, in order (ADK's ``get_all_tool_calls``)."""
    if data is None:
        return []
    if isinstance(data, IntermediateData):
        return list(data.tool_uses)
    return [
        part.function_call
        for event in data.invocation_events
        if event.content is not None
        for part in event.content.parts or ()
        if part.function_call is not None
    ]


def parse_eval_set_arg(arg: str) -> tuple[Path, list[str]]:
    """Split ``FILE[:id1,id2]`` into the file and the eval case ids chosen (ADK's
    ``parse_and_get_evals_to_run``; an empty list runs every case)."""
    path, sep, chosen = arg.partition(":")
    if not sep:
        return Path(arg), []
    return Path(path), [case for case in chosen.split(":")[0].split(",") if case.strip()]


def load_eval_set(path: Path) -> EvalSet:
    """Read an eval set file, or an old-format test file converted as ADK converts it.

    Raises:
        EvalSetError: The file is missing, is not JSON, or matches neither format (the
            message names the first problem of the eval set format).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise EvalSetError(f"cannot read eval set {path}: {err.strerror or err}") from err
    try:
        return EvalSet.model_validate_json(text)
    except ValidationError as err:
        first = err.errors()[0]
        problem = f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise EvalSetError(f"{path} is not JSON: {err.msg} (line {err.lineno})") from err
    if _all_have(data, "query"):
        # A test file: one conversation (ADK's ``_get_eval_set_from_old_format``, which names
        # the case after the file and gives the set a random id).
        cases = [{"name": str(path), "data": data}]
        set_id = str(uuid.uuid4())
    elif _all_have(data, "data"):
        # An eval set of the old schema (``convert_eval_set_to_pydantic_schema``).
        cases, set_id = data, str(path)
    else:
        raise EvalSetError(f"{path} is not an ADK eval set ({problem}) nor an old test file")
    try:
        return _from_old_format(set_id, cases)
    except (KeyError, TypeError, ValueError) as err:
        raise EvalSetError(f"{path}: the old eval format is malformed: {err!r}") from err


def _all_have(data: Any, key: str) -> bool:
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(item, dict) and key in item for item in data)
    )


def _from_old_format(set_id: str, old_cases: list[dict[str, Any]]) -> EvalSet:
    now = time.time()
    cases = []
    for old in old_cases:
        initial = old.get("initial_session") or {}
        session = None
        if initial:
            session = SessionInput(
                app_name=initial.get("app_name", ""),
                user_id=initial.get("user_id", ""),
                state=initial.get("state", {}),
            )
        conversation = [_old_turn(turn, now) for turn in old["data"]]
        cases.append(
            EvalCase(
                eval_id=old["name"],
                conversation=conversation,
                session_input=session,
                creation_timestamp=now,
            )
        )
    return EvalSet(eval_set_id=set_id, name=set_id, eval_cases=cases, creation_timestamp=now)


def _old_turn(turn: dict[str, Any], now: float) -> Invocation:
    """ADK's ``_convert_invocation_to_pydantic_schema``."""
    calls = [
        types.FunctionCall(name=use["tool_name"], args=use["tool_input"])
        for use in turn.get("expected_tool_use", [])
    ]
    responses = [
        (said["author"], [types.Part.from_text(text=said["text"])])
        for said in turn.get("expected_intermediate_agent_responses", [])
    ]
    return Invocation(
        invocation_id=str(uuid.uuid4()),
        user_content=types.Content(role="user", parts=[types.Part.from_text(text=turn["query"])]),
        final_response=types.Content(
            role="model", parts=[types.Part.from_text(text=turn.get("reference", ""))]
        ),
        intermediate_data=IntermediateData(tool_uses=calls, intermediate_responses=responses),
        creation_timestamp=now,
    )
