"""ADK's JSON: events, sessions and artifact versions as google-adk 2.13's API server writes
them, and the bodies its clients send.

Replies are camelCase with ``None`` left out (``model_dump(by_alias=True,
exclude_none=True)`` in ``google/adk/cli/api_server.py``), with only the fields ADK's models
have: its ``EventActions`` and ``ToolConfirmation`` refuse unknown fields, so the runtime's
own (``requested_inputs``, a confirmation's deadline) are left out. Bodies are read in
camelCase or snake_case, as ADK's pydantic models read them.
"""

from __future__ import annotations

from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ...artifacts.requests import ArtifactVersion
from ...double_texting import DoubleTexting
from ...events import Event, EventActions, EventCompaction
from ...sessions import Session

__all__ = [
    "CreateSessionBody",
    "RunBody",
    "UpdateSessionBody",
    "adk_event",
    "adk_session",
    "adk_version",
    "genai_json",
]


class _AdkBody(BaseModel):
    # camelCase as ADK's clients send it, snake_case too; a misspelt field is refused
    # rather than dropped with its default used.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class RunBody(_AdkBody):
    """``POST /run`` and ``/run_sse``: ADK's ``RunAgentRequest``."""

    app_name: str | None = None
    user_id: str
    session_id: str
    new_message: types.Content | None = None
    streaming: bool = False
    state_delta: dict[str, Any] | None = None
    function_call_event_id: str | None = None
    """Sent by ADK's dev UI with an answer; the answer's call id says enough."""
    invocation_id: str | None = None
    """ADK resumes an invocation by id; a durable run is answered in place instead."""
    custom_metadata: dict[str, Any] | None = None
    service_tier: str | None = None
    double_texting: DoubleTexting | None = None
    """Ours, not ADK's: what the message does when the session is busy (``reject``,
    ``enqueue``, ``interrupt``, ``rollback``; the app's policy when left out)."""


class CreateSessionBody(_AdkBody):
    """``POST .../sessions``: ADK's ``CreateSessionRequest`` (``events`` are refused)."""

    session_id: str | None = None
    state: dict[str, Any] | None = None
    events: list[dict[str, Any]] | None = None
    options: dict[str, Any] | None = None


class UpdateSessionBody(_AdkBody):
    """``PATCH .../sessions/{id}``: ADK's ``UpdateSessionRequest``."""

    state_delta: dict[str, Any] = Field(default_factory=dict)


def genai_json(value: BaseModel) -> Any:
    """A google.genai value as ADK writes it (camelCase, bytes as base64, no ``None``)."""
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


def _compaction(compaction: EventCompaction) -> dict[str, Any]:
    return {
        "startTimestamp": compaction.start_timestamp,
        "endTimestamp": compaction.end_timestamp,
        "compactedContent": genai_json(compaction.compacted_content),
    }


def _actions(actions: EventActions) -> dict[str, Any]:
    """ADK's ``EventActions`` JSON: its four maps always, the rest when set."""
    written: dict[str, Any] = {
        "stateDelta": actions.state_delta,
        "artifactDelta": actions.artifact_delta,
        "requestedAuthConfigs": {},
        "requestedToolConfirmations": {
            call_id: {"hint": c.hint, "confirmed": c.confirmed, "payload": c.payload}
            for call_id, c in actions.requested_tool_confirmations.items()
        },
    }
    for name, value in (
        ("skipSummarization", actions.skip_summarization or None),
        ("transferToAgent", actions.transfer_to_agent),
        ("escalate", actions.escalate or None),
        ("rewindBeforeInvocationId", actions.rewind_before_invocation_id),
    ):
        if value is not None:
            written[name] = value
    if actions.compaction is not None:
        written["compaction"] = _compaction(actions.compaction)
    return written


def adk_event(event: Event) -> dict[str, Any]:
    """``event`` as ADK's ``Event`` JSON."""
    written: dict[str, Any] = {}
    if event.content is not None:
        written["content"] = genai_json(event.content)
    for name, value in (
        ("partial", event.partial),
        ("errorCode", event.error_code),
        ("errorMessage", event.error_message),
    ):
        if value is not None:
            written[name] = value
    if event.usage_metadata is not None:
        written["usageMetadata"] = genai_json(event.usage_metadata)
    written |= {
        "invocationId": event.invocation_id,
        "author": event.author,
        "actions": _actions(event.actions),
    }
    if event.long_running_tool_ids:
        written["longRunningToolIds"] = list(event.long_running_tool_ids)
    if event.branch:
        written["branch"] = event.branch
    if event.isolation_scope:
        written["isolationScope"] = event.isolation_scope
    written |= {"id": event.id, "timestamp": event.timestamp}
    return written


def adk_session(session: Session, *, events: bool = True) -> dict[str, Any]:
    """``session`` as ADK's ``Session`` JSON (a listing's sessions have no events)."""
    return {
        "id": session.id,
        "appName": session.app_name,
        "userId": session.user_id,
        "state": session.state,
        "events": [adk_event(e) for e in session.events] if events else [],
        "lastUpdateTime": session.last_update_time,
    }


def adk_version(version: ArtifactVersion) -> dict[str, Any]:
    """One artifact version's metadata as ADK's ``ArtifactVersion`` JSON."""
    return {
        "version": version.version,
        "canonicalUri": version.canonical_uri,
        "customMetadata": version.custom_metadata,
        "createTime": version.create_time.timestamp(),
        "mimeType": version.mime_type,
    }
