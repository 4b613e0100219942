"""Building the model's view of the conversation from a session's events.

:func:`build_contents` applies, in this order:

0. rewinds take back their turns, compactions put their summaries in place of the events
   they cover (:func:`model_view`);
1. drop events without content (no parts, or only empty ones); empty text parts of the
   events kept stay as they are, parts with nothing set at all are dropped;
2. branch filter (:func:`is_branch_visible`);
3. isolation-scope filter — strict equality: a scoped agent sees only its scope, an
   unscoped agent only unscoped events;
4. drop the runtime's request calls and their answers (``adk_request_confirmation``,
   ``adk_request_input``, ``adk_request_credential``) — the model never asked for them;
5. collapse resumed calls: when a call has a placeholder response and a later one, only the
   final response is sent, in the placeholder's place, so it stays next to its call; when
   the latest event answers a call further back, the contents end with that call, its
   responses, then the unrelated calls and responses made in between (ADK-Go's rule);
6. events by other agents become user-role context: ``For context:``, then one part per
   part (``[author] said: ...``, calls and results as compact JSON, ``null`` for none),
   thoughts left out;
7. blank function-call and function-response ids starting with ``adk-``.

Branch and scope decide only what the model sees; they never partition session state.
The input events are never mutated.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from google.genai import types

from .errors import UnmatchedFunctionResponseError
from .events import (
    ADK_ID_PREFIX,
    REQUEST_CONFIRMATION_FUNCTION_NAME,
    REQUEST_INPUT_FUNCTION_NAME,
    Event,
    EventCompaction,
)

__all__ = [
    "CONTEXT_HEADER",
    "USER_AUTHOR",
    "ContentsBuilder",
    "build_contents",
    "compaction_span",
    "copy_contents",
    "current_turn",
    "is_branch_visible",
    "model_view",
    "transcript",
    "with_compactions",
    "without_rewound",
]

USER_AUTHOR = "user"
"""Author of the events a user writes: messages and answers to confirmation/input requests."""

# ADK clients write credential requests into shared sessions; filtering the name keeps such
# histories from leaking runtime calls into the model request.
_REQUEST_CREDENTIAL_FUNCTION_NAME = "adk_request_credential"

_RUNTIME_FUNCTION_NAMES = frozenset(
    {
        REQUEST_CONFIRMATION_FUNCTION_NAME,
        REQUEST_INPUT_FUNCTION_NAME,
        _REQUEST_CREDENTIAL_FUNCTION_NAME,
    }
)


def is_branch_visible(invocation_branch: str, event_branch: str) -> bool:
    """Whether an event on ``event_branch`` is visible to an invocation on ``invocation_branch``.

    Visible when either branch is empty, they are equal, or the event branch is a
    dot-bounded ancestor of the invocation branch. ``agent_0`` is therefore no ancestor of
    ``agent_00``, and ``a.b`` sees neither its child ``a.b.c`` nor its sibling ``a.c``.

    Args:
        invocation_branch: The branch of the agent whose request is being built.
        event_branch: The branch the event was recorded on.

    Returns:
        True when the event belongs in the agent's history.
    """
    if not invocation_branch or not event_branch or invocation_branch == event_branch:
        return True
    return invocation_branch.startswith(event_branch + ".")


def _has_content(part: types.Part) -> bool:
    """Whether ``part`` holds something the model reads (a thought's text counts)."""
    return bool(
        part.text
        or part.inline_data
        or part.file_data
        or part.function_call
        or part.function_response
        or part.executable_code
        or part.code_execution_result
    )


def _is_empty_part(part: types.Part) -> bool:
    """Whether ``part`` holds nothing for the model: no content, no thought signature.

    A signature may come on a part of its own, and the model needs it back (both ADKs keep
    such parts).
    """
    return not (_has_content(part) or part.thought_signature)


def _is_runtime_part(part: types.Part) -> bool:
    call, response = part.function_call, part.function_response
    return (call is not None and call.name in _RUNTIME_FUNCTION_NAMES) or (
        response is not None and response.name in _RUNTIME_FUNCTION_NAMES
    )


CONTEXT_HEADER = "For context:"
"""The first part of another agent's event retold to this agent (ADK's exact text)."""


def _as_json(value: Any) -> str:
    """Compact JSON, as ADK writes arguments and results into retold events; ``null`` for none.

    Other agents' results may hold values JSON cannot encode; their text is context only.
    """
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _as_context(author: str, parts: list[types.Part]) -> types.Content:
    """Another agent's event, retold to this agent as user-role context.

    ``For context:``, then one part per original part; thoughts are left out, and an event
    of thoughts only is not retold (no parts).
    """
    told: list[types.Part] = []
    for part in parts:
        if part.thought:
            continue
        if part.function_call is not None:
            call = part.function_call
            text = f"[{author}] called tool `{call.name}` with parameters: {_as_json(call.args)}"
            told.append(types.Part(text=text))
        elif part.function_response is not None:
            response = part.function_response
            told.append(
                types.Part(
                    text=f"[{author}] `{response.name}` tool returned result: "
                    f"{_as_json(response.response)}"
                )
            )
        elif part.text:
            told.append(types.Part(text=f"[{author}] said: {part.text}"))
        elif _has_content(part):
            told.append(part)
        # Empty text and bare signatures are another conversation's, nothing to retell.
    if told:
        told.insert(0, types.Part(text=CONTEXT_HEADER))
    return types.Content(role="user", parts=told)


def _copy_part(part: types.Part) -> types.Part:
    """A copy of ``part`` the caller may change freely without touching the event.

    Cheaper than ``model_copy(deep=True)``, which walks every one of genai's dozens of unset
    fields: the part and the objects it holds are copied shallowly, JSON values deeply, and
    runtime-generated (``adk-``) ids are blanked on the way.
    """
    update: dict[str, Any] = {}
    call, response = part.function_call, part.function_response
    if call is not None:
        update["function_call"] = call.model_copy(
            update={"args": copy.deepcopy(call.args), "id": _model_id(call.id)}
        )
    if response is not None:
        update["function_response"] = response.model_copy(
            update={"response": copy.deepcopy(response.response), "id": _model_id(response.id)}
        )
    for name in ("inline_data", "file_data", "executable_code", "code_execution_result"):
        held = getattr(part, name)
        if held is not None:
            update[name] = held.model_copy()
    return part.model_copy(update=update)


def _without_runtime_ids(part: types.Part) -> types.Part:
    """``part`` as the model sees it: runtime-generated ids blanked, the rest shared."""
    call, response = part.function_call, part.function_response
    update: dict[str, Any] = {}
    if call is not None and _model_id(call.id) != call.id:
        update["function_call"] = call.model_copy(update={"id": None})
    if response is not None and _model_id(response.id) != response.id:
        update["function_response"] = response.model_copy(update={"id": None})
    return part.model_copy(update=update) if update else part


def _model_id(call_id: str | None) -> str | None:
    """The id the model sees: runtime-generated ``adk-`` ids are blanked."""
    return None if call_id and call_id.startswith(ADK_ID_PREFIX) else call_id


def _own_content(event: Event, parts: list[types.Part]) -> types.Content:
    role = event.content.role if event.content is not None else None
    if not role:
        answers = any(p.function_response is not None for p in parts)
        role = "user" if event.author == USER_AUTHOR or answers else "model"
    # Stored parts are shared, not copied: they never change, and whoever may change the
    # contents copies them first (copy_contents). The parts are already valid;
    # re-validating them would cost more than building the content.
    return types.Content.model_construct(role=role, parts=[_without_runtime_ids(p) for p in parts])


def copy_contents(contents: Sequence[types.Content]) -> list[types.Content]:
    """Copies of ``contents`` that may be changed without touching the events they came from.

    Cheaper than a deep ``model_copy``: what a part holds by value (text, bytes) is shared,
    what it holds in objects (calls, responses, blobs, file references) is copied.
    """
    return [
        types.Content.model_construct(
            role=content.role, parts=[_copy_part(p) for p in content.parts or []]
        )
        for content in contents
    ]


@dataclass(slots=True)
class _Entry:
    """One visible event: the parts kept of it, and where its content is in the result."""

    event: Event
    parts: list[types.Part]
    index: int | None
    call_ids: frozenset[str] = frozenset()
    """Ids of the calls it makes (own and user events only: others' are retold as text)."""
    response_ids: frozenset[str] = frozenset()
    """Ids of the calls it answers (likewise)."""


class ContentsBuilder:
    """The contents one agent sees, built event by event as its session grows.

    Stored events never change, so each is converted once, when first seen: a step costs
    what its new events cost, not what the session holds. A call's later response replaces
    its earlier one in place (rule 5), which rebuilds only the content of the event that
    held the earlier one.

    :meth:`contents` shares its Content objects between calls: copy them
    (:func:`copy_contents`) before handing them to code that may change them.

    Args:
        agent_name: The agent the contents are for; events by any other author except
            ``user`` become user-role context.
        branch: The invocation branch.
        isolation_scope: The invocation's isolation scope.
    """

    def __init__(self, *, agent_name: str, branch: str = "", isolation_scope: str = "") -> None:
        self._agent_name = agent_name
        self._branch = branch
        self._isolation_scope = isolation_scope
        self._contents: list[types.Content] = []
        self._entries: list[_Entry] = []
        """The entries with a content, ``_entries[i]`` holding ``_contents[i]``."""
        self._first_response: dict[str, tuple[_Entry, int]] = {}
        self._call_at: dict[str, int] = {}
        """Where each call id's call is in ``_contents``."""
        self._latest: tuple[_Entry | None, _Entry | None] = (None, None)
        """The last two visible events (before last, last), kept or collapsed away."""
        self._seen = 0
        self._last_id: str | None = None

    def follows(self, events: Sequence[Event]) -> bool:
        """Whether ``events`` continue the events this builder has seen.

        Sessions only grow, so the builder has seen a prefix of ``events`` when the last
        event it saw is at the same position. Events seen but never stored (a step that
        failed before its append) and then overtaken by others' appends fail this.
        """
        return self._seen == 0 or (
            len(events) >= self._seen and events[self._seen - 1].id == self._last_id
        )

    def extend(self, events: Sequence[Event]) -> None:
        """Take in the events after those already seen (``events`` must :meth:`follow`).

        A rewind or compaction event among them makes the builder start over on
        :func:`model_view` of all ``events``: what it built already may hold the turns the
        rewind took back or the compaction summarised.
        """
        new = events[self._seen :]
        if any(_reshapes_view(event) for event in new):
            # A fresh builder's fields, whatever they are, replace this one's.
            fresh = ContentsBuilder(
                agent_name=self._agent_name,
                branch=self._branch,
                isolation_scope=self._isolation_scope,
            )
            vars(self).update(vars(fresh))
            new = model_view(events)
        for event in new:
            self._add(event)
        if events:
            self._seen = len(events)
            self._last_id = events[-1].id

    def contents(self) -> list[types.Content]:
        """One content per visible event, in event order (shared objects; see the class).

        When the latest event answers a call further back than the event before it (a
        long-running call answered later), the contents continue after that call with, in
        one content, the responses to its calls, then the calls and responses unrelated to
        it made in between, in their order; the words said in between are dropped (ADK-Go's
        ``rearrangeEventsForLatestFunctionResponse`` followed by its pairing of calls with
        their responses).

        Raises:
            UnmatchedFunctionResponseError: The latest event answers a call that is nowhere
                in this agent's history.
        """
        before, latest = self._latest
        answered = latest.response_ids if latest is not None else frozenset()
        if not answered or (before is not None and answered & before.call_ids):
            return list(self._contents)
        found = [self._call_at[i] for i in answered if i in self._call_at]
        if not found:
            raise UnmatchedFunctionResponseError(
                f"the latest function response answers call {', '.join(sorted(answered))}, "
                f"which is nowhere in the history of agent {self._agent_name!r}"
            )
        at = max(found)
        calls = self._entries[at].call_ids
        responses: list[types.Part] = []
        unrelated: list[types.Content] = []
        between = zip(self._entries[at + 1 :], self._contents[at + 1 :], strict=True)
        for entry, content in between:
            # As ADK-Go decides: an event making calls stays, one answering the call is
            # merged, one answering other calls stays; the rest is dropped.
            if entry.response_ids & calls and not entry.call_ids:
                responses += content.parts or []
            elif entry.call_ids or entry.response_ids:
                unrelated.append(content)
        return [
            *self._contents[: at + 1],
            types.Content.model_construct(role="user", parts=responses),
            *unrelated,
        ]

    def _add(self, event: Event) -> None:
        if not is_branch_visible(self._branch, event.branch):
            return
        if event.isolation_scope != self._isolation_scope:
            return
        kept: list[types.Part] = []
        entry = _Entry(event, kept, None)
        own = event.author in (self._agent_name, USER_AUTHOR)
        calls: set[str] = set()
        answers: set[str] = set()
        for part in event.parts():
            if _is_runtime_part(part):
                continue
            if _is_empty_part(part):
                # An empty text part reaches the model as it is (ADK-Python's
                # test_events_with_empty_content_are_skipped); a part with nothing set, as
                # a stream may end with, is dropped (ADK-Go's buildContentsDefault).
                if part.text is not None:
                    kept.append(part)
                continue
            call, response = part.function_call, part.function_response
            if own and call is not None and call.id:
                calls.add(call.id)
            if response is not None and response.id:
                if own:
                    answers.add(response.id)
                first = self._first_response.get(response.id)
                if first is not None:
                    self._replace(*first, part)
                    continue
                self._first_response[response.id] = (entry, len(kept))
            kept.append(part)
        if all(_is_empty_part(p) for p in kept):
            kept.clear()  # empty text alone is no content: the event is dropped
        if not (kept or answers):
            return
        entry.call_ids, entry.response_ids = frozenset(calls), frozenset(answers)
        # The latest event counts even when its responses all went to earlier places.
        self._latest = (self._latest[1], entry)
        if not kept:
            return
        content = self._content(entry)
        if content.parts:
            entry.index = len(self._contents)
            self._contents.append(content)
            self._entries.append(entry)
            for call_id in entry.call_ids:
                self._call_at[call_id] = entry.index

    def _replace(self, entry: _Entry, position: int, part: types.Part) -> None:
        entry.parts[position] = part
        # No index: the entry is the event being added (it answers one call twice). An
        # earlier entry holding a response always has one, as responses are never dropped.
        if entry.index is not None:
            self._contents[entry.index] = self._content(entry)

    def _content(self, entry: _Entry) -> types.Content:
        author = entry.event.author
        if author in (self._agent_name, USER_AUTHOR):
            return _own_content(entry.event, entry.parts)
        return _as_context(author, entry.parts)


def build_contents(
    events: Sequence[Event],
    *,
    agent_name: str,
    branch: str = "",
    isolation_scope: str = "",
) -> list[types.Content]:
    """The contents to send to the model for ``agent_name``, from the session's events.

    Args:
        events: The session's events, oldest first (not mutated).
        agent_name: The agent the request is built for; events by any other author except
            ``user`` become user-role context.
        branch: The invocation branch.
        isolation_scope: The invocation's isolation scope.

    Returns:
        One content per remaining event, in event order, free to change.
    """
    builder = ContentsBuilder(agent_name=agent_name, branch=branch, isolation_scope=isolation_scope)
    builder.extend(events)
    return copy_contents(builder.contents())


def current_turn(
    events: Sequence[Event], *, agent_name: str, branch: str = "", isolation_scope: str = ""
) -> Sequence[Event]:
    """The events of an agent's current turn, for ``include_contents="none"``.

    As in ADK, the turn starts at the latest event the agent sees (its branch and scope)
    that the user or another agent wrote. An event holding nothing for the model (a reply
    to a confirmation, say) starts no turn, so a resumed call keeps its call in view.
    Without such an event, every event is the turn. Rewound turns are no turn
    (:func:`without_rewound`).
    """
    events = without_rewound(events)
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if event.author == agent_name or event.isolation_scope != isolation_scope:
            continue
        if not is_branch_visible(branch, event.branch):
            continue
        # Content, not a bare thought signature: a turn starts with something said.
        if any(_has_content(p) and not (_is_runtime_part(p) or p.thought) for p in event.parts()):
            return events[index:]
    return events


# ---------------------------------------------------------------- rewinds (rewind.py)


def without_rewound(events: Sequence[Event]) -> list[Event]:
    """``events`` without what rewinds took back: the model's view after rewinds.

    As ADK's ``_apply_rewinds``: read from the newest event back, a rewind event (one with
    ``actions.rewind_before_invocation_id``) is dropped together with every event from the
    first event of the invocation it names up to it; the search goes on before that event,
    so an earlier rewind inside the range is taken back with it and rewinding to before a
    rewind event undoes it. A rewind naming no stored invocation drops only itself. The
    events stay stored: only the view leaves them out.
    """
    kept: list[Event] = []
    index = len(events) - 1
    while index >= 0:
        event = events[index]
        target = event.actions.rewind_before_invocation_id
        if target:
            index = next((i for i in range(index) if events[i].invocation_id == target), index)
        else:
            kept.append(event)
        index -= 1
    kept.reverse()
    return kept


# ------------------------------------------------------------ compactions (compaction.py)


def _reshapes_view(event: Event) -> bool:
    """Whether the event changes the view of the events before it (rewind, compaction)."""
    return bool(event.actions.rewind_before_invocation_id) or event.actions.compaction is not None


def compaction_span(events: Sequence[Event], at: int) -> tuple[int, int] | None:
    """Positions (first, last) in ``events`` of what the compaction event at ``at`` covers.

    Its event ids name the range when both are found before it; otherwise (a compaction
    ADK wrote) the non-compaction events before it whose timestamps lie in its range do.
    ``None`` when it covers nothing stored.
    """
    compaction = events[at].actions.compaction
    if compaction is None:
        return None
    where = {event.id: index for index, event in enumerate(events[:at])}
    first, last = where.get(compaction.start_event_id), where.get(compaction.end_event_id)
    if compaction.start_event_id and first is not None and last is not None:
        return (first, last) if first <= last else None
    inside = [
        index
        for index, event in enumerate(events[:at])
        if event.actions.compaction is None
        and compaction.start_timestamp <= event.timestamp <= compaction.end_timestamp
    ]
    return (inside[0], inside[-1]) if inside else None


def with_compactions(events: Sequence[Event]) -> list[Event]:
    """``events`` as the model sees them after compactions: summaries in place of ranges.

    As ADK-Python's ``_process_compaction_events``: read from the newest compaction back,
    each one drops the events it covers and puts its summary where the last of them was;
    a compaction whose whole range a later one covers already is left out (the later
    summary took it in). Compaction events themselves hold nothing for the model. The
    events stay stored: only the view leaves them out.
    """
    covered: set[int] = set()
    summary_at: dict[int, Event] = {}
    for at in range(len(events) - 1, -1, -1):
        span = compaction_span(events, at)
        if span is None:
            continue
        positions = set(range(span[0], span[1] + 1))
        if positions <= covered:
            continue
        covered |= positions
        compaction = events[at].actions.compaction
        if compaction is not None:
            summary_at[span[1]] = _summary_event(events[at], compaction)
    view: list[Event] = []
    for index, event in enumerate(events):
        if index in summary_at:
            view.append(summary_at[index])
        elif index not in covered and event.actions.compaction is None:
            view.append(event)
    return view


def _summary_event(event: Event, compaction: EventCompaction) -> Event:
    return Event(
        id=event.id,
        invocation_id=event.invocation_id,
        author=USER_AUTHOR,
        branch=event.branch,
        isolation_scope=event.isolation_scope,
        content=compaction.compacted_content,
        timestamp=compaction.end_timestamp,
    )


def model_view(events: Sequence[Event]) -> list[Event]:
    """The events the model's view is built from: rewinds applied, then compactions."""
    return with_compactions(without_rewound(events))


def transcript(events: Sequence[Event]) -> str:
    """``events`` retold as text, one line per part (``[author] said: ...``), for a summarizer.

    Runtime request calls and their answers are left out, as from the model's view.
    """
    lines: list[str] = []
    for event in events:
        parts = [p for p in event.parts() if not _is_runtime_part(p)]
        told = _as_context(event.author, parts).parts or []
        lines += [p.text for p in told[1:] if p.text]
    return "\n".join(lines)
