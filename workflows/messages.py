"""What crosses the workflow boundary: start input, signal/update/query names, search keys.

The answers, requests, status and result models are the flow's
(:mod:`adk_temporal.flow.messages`); this module adds what only the Temporal workflow has.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field
from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes

from adk_temporal.budgets import Budgets
from adk_temporal.double_texting import QueuedMessage, QueuedSummary
from adk_temporal.flow.graph_spec import GraphSpec
from adk_temporal.flow.graph_state import NodeStatus
from adk_temporal.flow.messages import InvocationCarry, InvocationResult, RequestSummary
from adk_temporal.ids import SessionKey
from adk_temporal.run_config import RunConfig

__all__ = [
    "ADK_AGENT",
    "ADK_APP",
    "ADK_SCHEDULE",
    "ADK_SESSION",
    "ADK_STATUS",
    "ADK_USER",
    "BASELINE",
    "CONFIRM_CHECKED_UPDATE",
    "CONFIRM_SIGNAL",
    "GRAPH_MEMO",
    "INBOX_CHECKED_UPDATE",
    "INBOX_SIGNAL",
    "MESSAGE_CHECKED_UPDATE",
    "MESSAGE_SIGNAL",
    "NODE_MEMO_PREFIX",
    "PENDING_QUERY",
    "QUEUED_MEMO",
    "QUEUE_QUERY",
    "REFUSED_IN_MEMO",
    "REFUSED_MEMO",
    "REQUESTS_MEMO",
    "RESUME_CHECKED_UPDATE",
    "RESUME_SIGNAL",
    "SCHEDULE_MEMO",
    "STATUS_QUERY",
    "WITHDRAW_UPDATE",
    "InvocationInput",
    "Published",
    "graph_memo",
    "start_attributes",
]

CONFIRM_SIGNAL = "adk_confirm"
"""Signal answering a confirmation request."""
CONFIRM_CHECKED_UPDATE = "adk_confirm_checked"
"""Update answering a confirmation request, rejecting unknown or answered ids."""
RESUME_SIGNAL = "adk_resume"
"""Signal answering an input request."""
RESUME_CHECKED_UPDATE = "adk_resume_checked"
"""Update answering an input request, rejecting unknown ids and schema violations."""
INBOX_SIGNAL = "adk_inbox"
"""Signal claiming, releasing or assigning an open request."""
INBOX_CHECKED_UPDATE = "adk_inbox_checked"
"""Update claiming, releasing or assigning an open request, rejecting what cannot be taken."""
PENDING_QUERY = "adk_pending"
"""Query returning the open requests."""
STATUS_QUERY = "adk_status"
"""Query returning the invocation's status."""
MESSAGE_SIGNAL = "adk_message"
"""Signal carrying a message sent while the session was busy (a schedule's firing sends it)."""
MESSAGE_CHECKED_UPDATE = "adk_message_checked"
"""Update carrying a message sent while the session was busy; its sender learns where the
message waits, or why it was refused."""
WITHDRAW_UPDATE = "adk_withdraw"
"""Update taking a queued message out before it runs."""
QUEUE_QUERY = "adk_queue"
"""Query returning the queued messages."""

REQUESTS_MEMO = "adk_requests"
"""Memo key: the open requests (:class:`~adk_temporal.flow.messages.RequestSummary` values),
readable with ``describe`` or a visibility list while no worker runs."""
REFUSED_MEMO = "adk_refused"
"""Memo key: the latest refused answers, as ``adk_status`` lists them."""
REFUSED_IN_MEMO = 10
"""How many refused answers the memo keeps (``adk_status`` has the rest)."""
GRAPH_MEMO = "adk_graph"
"""Memo key: a graph run's graph (:class:`~adk_temporal.flow.graph_spec.GraphSpec`)."""
NODE_MEMO_PREFIX = "adk_node:"
"""Memo key prefix: ``adk_node:<node>`` is where node ``<node>`` (its name below the root
graph, ``inner/step`` in a nested one) stands; a node without a key is pending. One key per
node, so a status change upserts only its own key and history per node stays flat."""
QUEUED_MEMO = "adk_queued"
"""Memo key: the queued messages (:class:`~adk_temporal.double_texting.QueuedSummary`
values), present once a message was queued."""
SCHEDULE_MEMO = "adk_schedule"
"""Memo key: the id of the schedule whose firing started the invocation, if one did."""

ADK_APP = SearchAttributeKey.for_keyword("AdkApp")
"""Search attribute: the app name."""
ADK_USER = SearchAttributeKey.for_keyword("AdkUser")
"""Search attribute: the user id."""
ADK_SESSION = SearchAttributeKey.for_keyword("AdkSession")
"""Search attribute: the session id."""
ADK_AGENT = SearchAttributeKey.for_keyword("AdkAgent")
"""Search attribute: the agent the invocation was started with."""
ADK_SCHEDULE = SearchAttributeKey.for_keyword("AdkSchedule")
"""Search attribute: the schedule whose firing started the invocation (set only on such
runs, so servers without schedules need not register it)."""
ADK_STATUS = SearchAttributeKey.for_keyword("AdkStatus")
"""Search attribute: running / awaiting_confirmation / awaiting_input / completed / failed /
cancelled."""


def start_attributes(
    key: SessionKey, agent: str, schedule_id: str | None = None
) -> TypedSearchAttributes:
    """The search attributes an invocation's first run starts with: the session, the agent,
    ``running``, and the schedule that started it, if one did."""
    pairs = [
        SearchAttributePair(ADK_APP, key.app_name),
        SearchAttributePair(ADK_USER, key.user_id),
        SearchAttributePair(ADK_SESSION, key.session_id),
        SearchAttributePair(ADK_AGENT, agent),
        SearchAttributePair(ADK_STATUS, "running"),
    ]
    if schedule_id is not None:
        pairs.append(SearchAttributePair(ADK_SCHEDULE, schedule_id))
    return TypedSearchAttributes(pairs)


BASELINE = 4
"""The baseline the runs this release starts are on (``InvocationInput.baseline``)."""


class InvocationInput(RunConfig):
    """Start input of ``InvocationWorkflow``: the session, the message and the run's options.

    ``carry`` is set only by the workflow itself (continue-as-new).
    """

    # Decoded from history: fields a newer client adds are ignored, not refused.
    model_config = ConfigDict(frozen=False, extra="ignore")

    app_name: str
    user_id: str
    session_id: str
    agent_name: str
    message: types.Content | None = None
    invocation_id: str | None = None
    budgets: Budgets = Field(default_factory=Budgets)
    answer_address: str | None = None
    """The Temporal address the starting client used: the UI's answer commands name it."""
    carry: InvocationCarry | None = None
    started_by: str | None = None
    """Who started the invocation, as the starting surface authenticated them (the gateway's
    token, the CLI's ``--as`` or login name); an approval policy with
    ``requester_may_approve=False`` keeps them — and the session's user — from approving
    its calls. Kept out of the options steps see, so step inputs do not grow with it."""
    baseline: int = 0
    """What the run has from its start, set by the client that starts it: at 1, every
    behaviour change released until then without a patch marker, and ids drawn from the run
    id, which step inputs carry short (:mod:`adk_temporal.workflows.short_ids`); at 2, also
    an answer's status and memo published after the steps it resumes; at 3, also double
    texting (:mod:`adk_temporal.double_texting`), the hand-back of steps another app's
    worker took, graphs continued as new and their node statuses in the memo, and the
    reminders and reassignments of approval policies; at 4, also local steps
    (:class:`~adk_temporal.dispatch.LocalSteps`). 0: a run started by an earlier client,
    which asks ``workflow.patched`` and draws random ids."""
    queued: list[QueuedMessage] = Field(default_factory=list)
    """Messages sent while the session was busy, in the order they run: carried from run
    to run until their turn."""
    before: InvocationResult | None = None
    """Set on the first run of a queued invocation: the result of the invocation that ended
    where this run begins, which that invocation's caller reads here."""
    schedule_id: str | None = None
    """The schedule whose firing started the invocation, if one did."""

    @classmethod
    def of_message(
        cls,
        message: QueuedMessage,
        key: SessionKey,
        *,
        budgets: Budgets,
        answer_address: str | None,
        **more: Any,
    ) -> InvocationInput:
        """The start input of the invocation of a message sent to ``key`` (a queued one,
        or a schedule's firing): its agent, options, invocation id and baseline."""
        return cls(
            **message.config.model_dump(),
            app_name=key.app_name,
            user_id=key.user_id,
            session_id=key.session_id,
            agent_name=message.agent_name,
            message=message.message,
            invocation_id=message.invocation_id,
            budgets=budgets,
            answer_address=answer_address,
            baseline=message.baseline,
            schedule_id=message.schedule_id,
            started_by=message.started_by,
            **more,
        )


class Published(BaseModel):
    """What a run publishes in its memo, readable with no worker running."""

    requests: list[RequestSummary] = Field(default_factory=list)
    """The open requests, in the order they were opened."""
    refused: list[str] = Field(default_factory=list)
    """The latest refused answers (id, kind, size: reason)."""
    queued: list[QueuedSummary] = Field(default_factory=list)
    """The messages waiting for the session, in the order they run."""
    schedule_id: str | None = None
    """The schedule whose firing started the invocation, if one did."""

    graph: GraphSpec | None = None
    """A graph run's graph."""
    nodes: dict[str, NodeStatus] = Field(default_factory=dict)
    """Where each node of ``graph`` that ran stands, by its name below the root."""

    @classmethod
    def from_memo(cls, memo: Mapping[str, Any]) -> Published:
        """Read a run's memo (runs that published nothing give an empty value)."""
        nodes = {
            key.removeprefix(NODE_MEMO_PREFIX): value
            for key, value in memo.items()
            if key.startswith(NODE_MEMO_PREFIX)
        }
        return cls(
            requests=memo.get(REQUESTS_MEMO) or [],
            refused=memo.get(REFUSED_MEMO) or [],
            graph=memo.get(GRAPH_MEMO),
            nodes=nodes,
            queued=memo.get(QUEUED_MEMO) or [],
            schedule_id=memo.get(SCHEDULE_MEMO),
        )


def graph_memo(graph: GraphSpec, nodes: Mapping[str, NodeStatus]) -> dict[str, Any]:
    """The memo keys a graph run publishes: its graph, and each node's status."""
    memo: dict[str, Any] = {GRAPH_MEMO: graph.model_dump(mode="json", exclude_defaults=True)}
    memo.update({f"{NODE_MEMO_PREFIX}{name}": status for name, status in nodes.items()})
    return memo
