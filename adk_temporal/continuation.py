"""Which agent a follow-up message goes to: ADK's runner rule, read from the session.

After a coordinator transferred the conversation to a sub-agent, the user's next message
goes to that sub-agent, not back to the root (ADK-Go ``Runner.findAgentToRun``,
ADK-Python ``Runner._find_agent_to_run``):

1. a message that answers a function call (a function response) goes to the agent that
   made the call;
2. otherwise the session's events are walked back from the latest: the root itself, or an
   agent of the tree whose whole chain up to the root is LLM agents none of which disallows
   transfer to its parent, is the answer; any other author (an agent under a workflow agent,
   one that disallows transfer to its parent, a name no longer in the tree) is passed over;
3. nothing found: the root.

Events a rewind took back are not read: the conversation is where the rewind left it.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.genai import types

from .agents import AgentRegistry
from .events import Event
from .history import USER_AUTHOR, without_rewound

__all__ = ["agent_to_continue"]


def _caller(events: Sequence[Event], message: types.Content | None) -> str | None:
    """The author of the call the message's first function response answers, if any."""
    if message is None:
        return None
    responses = [p.function_response for p in message.parts or [] if p.function_response]
    if not responses:
        return None
    call_id = responses[0].id
    for event in reversed(events):
        if any(call.id == call_id for call in event.function_calls()):
            return event.author
    return None


def agent_to_continue(
    registry: AgentRegistry,
    root: str,
    events: Sequence[Event],
    message: types.Content | None,
) -> str:
    """The agent of ``root``'s tree that takes ``message`` after the session's ``events``.

    Args:
        registry: The agents served, with their parents.
        root: The root agent the invocation was started with.
        events: The session's stored events, oldest first (the message not among them).
        message: The new user message, if any.
    """
    in_tree = {name for name in registry if registry.root_of(name) == root}
    events = without_rewound(events)
    caller = _caller(events, message)
    if caller is not None and caller in in_tree:
        return caller
    for event in reversed(events):
        if event.author == USER_AUTHOR or event.author not in in_tree:
            continue
        if event.author == root or registry.may_continue(event.author):
            return event.author
    return root
