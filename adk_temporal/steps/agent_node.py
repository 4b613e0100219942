"""An LLM agent node in the steps: its input shown to the model, its answer as output.

The values along a graph's edges are read back here too. Ports what ADK 2.13's
``google/adk/workflow/_llm_agent_wrapper.py`` does for a ``single_turn`` agent node: the
node's input becomes a user-role content (a string as text, other values as JSON,
``to_user_content``) appended to the session in memory only, so the model sees it and the
store never does; the agent sees only its current turn unless its author set
``include_contents``; its final text is the node's output (``message_as_output``), or the
value its ``output_schema`` validated.
"""

from __future__ import annotations

import json
from typing import Any

from google.genai import types
from pydantic import BaseModel

from ..agents import Agent
from ..events import Event, NodeInfo
from ..flow.node_values import InlineValue, JoinedValue, MessageValue, NodeValue, StoredValue
from ..history import USER_AUTHOR
from .ref import SessionRef
from .services import user_content
from .session_cache import LoadedSession

__all__ = ["edge_value", "mark_answer", "sees_current_turn_only", "show_node_input"]


def edge_value(value: NodeValue, loaded: LoadedSession, ref: SessionRef) -> Any:
    """The value an edge carries, read back where it is stored: a stored output from its
    event (an agent node's answer as its content), the message from the session."""
    if isinstance(value, InlineValue):
        return value.value
    if isinstance(value, JoinedValue):
        return {name: edge_value(v, loaded, ref) for name, v in value.values.items()}
    if isinstance(value, MessageValue):
        return user_content(loaded, ref, loaded.stored.events)
    assert isinstance(value, StoredValue)
    event = loaded.stored.ids[value.event_id]
    if event.output is None and event.node_info is not None and event.node_info.message_as_output:
        return event.content
    return event.output


def _user_turn(value: Any) -> types.Content:
    """``value`` as a user-role content (ADK's ``to_user_content``)."""
    if isinstance(value, types.Content):
        return types.Content(role="user", parts=value.parts)
    if isinstance(value, str):
        text = value
    elif isinstance(value, BaseModel):
        text = value.model_dump_json()
    elif isinstance(value, dict | list):
        text = json.dumps(value, ensure_ascii=False)
    else:
        text = str(value)
    return types.Content(role="user", parts=[types.Part(text=text)])


def show_node_input(
    events: list[Event], ref: SessionRef, value: NodeValue, loaded: LoadedSession
) -> None:
    """Insert the node's input as a user event just before the node's own events (at the
    end on its first step), in ``events`` only: every model call of the node sees it where
    ADK's in-memory session has it, and nothing stores it."""
    shown = edge_value(value, loaded, ref)
    if shown is None:
        return
    event = Event(
        id=f"{ref.invocation_id}/{ref.node_path}/input",
        invocation_id=ref.invocation_id,
        author=USER_AUTHOR,
        branch=ref.branch,
        content=_user_turn(shown),
        node_info=NodeInfo(path=ref.node_path),
    )
    at = next(
        (i for i, e in enumerate(events) if e.node_info and e.node_info.path == ref.node_path),
        len(events),
    )
    events.insert(at, event)


def sees_current_turn_only(agent: Agent, ref: SessionRef) -> bool:
    """Whether the model sees only the agent's current turn: ``include_contents="none"``,
    or an agent node whose author left ``include_contents`` unset (ADK's default there)."""
    if agent.include_contents_set or not ref.node_path:
        return agent.include_contents == "none"
    return True


def mark_answer(event: Event, ref: SessionRef, value: Any) -> None:
    """Mark an agent node's final model event as the node's output: its content, or the
    value ``output_schema`` validated (``value``, ``None`` without a schema)."""
    if value is not None:
        event.output = value
        event.node_info = NodeInfo(path=ref.node_path, output_for=[ref.node_path])
        return
    event.node_info = NodeInfo(path=ref.node_path, message_as_output=True)
