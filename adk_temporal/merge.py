"""Merging the results of a step's parallel tool calls into one function-response event.

Tools of one step run concurrently and each records only its own writes; the workflow
merges their actions in **call order** (the order the model made the calls, not the order
they finished), so the merged event is the same on every replay. Nothing here mutates its
inputs: every merged value is a deep copy.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from google.genai import types

from .events import Event, EventActions

__all__ = ["merge_actions", "merge_function_response_events"]


def _deep_merge(base: dict[str, Any], update: Mapping[str, Any]) -> None:
    """Merge ``update`` into ``base``: nested dicts merge, any other value replaces."""
    for key, value in update.items():
        current = base.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            _deep_merge(current, value)
        else:
            base[key] = copy.deepcopy(value)


def merge_actions(actions: Sequence[EventActions]) -> EventActions:
    """Merge the actions of a step's tool calls, given in call order.

    * ``skip_summarization``, ``escalate``, ``end_invocation``: true if any is true.
    * ``transfer_to_agent``: the last non-empty value.
    * ``state_delta``: deep-merged, a later call winning per key; nested dicts merge.
    * ``artifact_delta``: the highest version per name (a later call never lowers it).
    * ``requested_tool_confirmations``, ``requested_inputs``: union.

    Args:
        actions: The calls' actions, in call order.

    Returns:
        New actions; the inputs are left untouched. No actions merge to empty actions.
    """
    state: dict[str, Any] = {}
    artifacts: dict[str, int] = {}
    merged = EventActions()
    for item in actions:
        _deep_merge(state, item.state_delta)
        for name, version in item.artifact_delta.items():
            artifacts[name] = max(version, artifacts.get(name, version))
        merged.requested_tool_confirmations.update(
            {k: v.model_copy(deep=True) for k, v in item.requested_tool_confirmations.items()}
        )
        merged.requested_inputs.update(
            {k: v.model_copy(deep=True) for k, v in item.requested_inputs.items()}
        )
        merged.skip_summarization = merged.skip_summarization or item.skip_summarization
        merged.escalate = merged.escalate or item.escalate
        merged.end_invocation = merged.end_invocation or item.end_invocation
        if item.transfer_to_agent:
            merged.transfer_to_agent = item.transfer_to_agent
    merged.state_delta = state
    merged.artifact_delta = artifacts
    return merged


def merge_function_response_events(events: Sequence[Event]) -> Event:
    """Merge a step's function-response events, given in call order, into one event.

    The merged event keeps the first event's id and metadata, concatenates the parts in
    call order, merges the actions with :func:`merge_actions`, unions
    ``long_running_tool_ids`` (first occurrence order) and deep-merges ``custom_metadata``.

    Args:
        events: One function-response event per call, in the model's call order.

    Returns:
        A new event; the inputs are left untouched.

    Raises:
        ValueError: ``events`` is empty.
    """
    if not events:
        raise ValueError("merge_function_response_events needs at least one event")
    first = events[0]
    parts = [p.model_copy(deep=True) for event in events for p in event.parts()]
    role = first.content.role if first.content is not None else None
    long_running = list(dict.fromkeys(i for event in events for i in event.long_running_tool_ids))
    metadata: dict[str, Any] = {}
    for event in events:
        _deep_merge(metadata, event.custom_metadata or {})
    return first.model_copy(
        deep=True,
        update={
            "content": types.Content(role=role or "user", parts=parts),
            "actions": merge_actions([event.actions for event in events]),
            "long_running_tool_ids": long_running,
            "custom_metadata": metadata or None,
        },
    )
