"""What crosses the workflow boundary: start input, signal/update/query names, search keys.

The answers, requests, status and result models are the flow's
(:mod:`adk_temporal.flow.messages`); this module adds what only the Temporal workflow has.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field
from temporalio.common import SearchAttributeKey

from adk_temporal.budgets import Budgets
from adk_temporal.flow.messages import InvocationCarry, RequestSummary
from adk_temporal.run_config import RunConfig

__all__ = [
    "ADK_AGENT",
    "ADK_APP",
    "ADK_SESSION",
    "ADK_STATUS",
    "ADK_USER",
    "BASELINE",
    "CONFIRM_CHECKED_UPDATE",
    "CONFIRM_SIGNAL",
    "INBOX_CHECKED_UPDATE",
    "INBOX_SIGNAL",
    "PENDING_QUERY",
    "REFUSED_IN_MEMO",
    "REFUSED_MEMO",
    "REQUESTS_MEMO",
    "RESUME_CHECKED_UPDATE",
    "RESUME_SIGNAL",
    "STATUS_QUERY",
    "InvocationInput",
    "Published",
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

REQUESTS_MEMO = "adk_requests"
"""Memo key: the open requests (:class:`~adk_temporal.flow.messages.RequestSummary` values),
readable with ``describe`` or a visibility list while no worker runs."""
REFUSED_MEMO = "adk_refused"
"""Memo key: the latest refused answers, as ``adk_status`` lists them."""
REFUSED_IN_MEMO = 10
"""How many refused answers the memo keeps (``adk_status`` has the rest)."""

ADK_APP = SearchAttributeKey.for_keyword("AdkApp")
"""Search attribute: the app name."""
ADK_USER = SearchAttributeKey.for_keyword("AdkUser")
"""Search attribute: the user id."""
ADK_SESSION = SearchAttributeKey.for_keyword("AdkSession")
"""Search attribute: the session id."""
ADK_AGENT = SearchAttributeKey.for_keyword("AdkAgent")
"""Search attribute: the agent the invocation was started with."""
ADK_STATUS = SearchAttributeKey.for_keyword("AdkStatus")
"""Search attribute: running / awaiting_confirmation / awaiting_input / completed / failed /
cancelled."""


BASELINE = 3
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
    an answer's status and memo published after the steps it resumes; at 3, also the
    reminders and reassignments of approval policies. 0: a run started by an earlier
    client, which asks ``workflow.patched`` and draws random ids."""


class Published(BaseModel):
    """What a run publishes in its memo, readable with no worker running."""

    requests: list[RequestSummary] = Field(default_factory=list)
    """The open requests, in the order they were opened."""
    refused: list[str] = Field(default_factory=list)
    """The latest refused answers (id, kind, size: reason)."""

    @classmethod
    def from_memo(cls, memo: Mapping[str, Any]) -> Published:
        """Read a run's memo (runs that published nothing give an empty value)."""
        return cls(requests=memo.get(REQUESTS_MEMO) or [], refused=memo.get(REFUSED_MEMO) or [])
