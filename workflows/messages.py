"""What crosses the workflow boundary: start input, signal/update/query names, search keys.

The answers, requests, status and result models are the flow's
(:mod:`adk_temporal.flow.messages`); this module adds what only the Temporal workflow has.
"""

from __future__ import annotations

from google.genai import types
from pydantic import BaseModel, Field
from temporalio.common import SearchAttributeKey

from adk_temporal.budgets import Budgets
from adk_temporal.flow.messages import InvocationCarry

__all__ = [
    "ADK_AGENT",
    "ADK_APP",
    "ADK_SESSION",
    "ADK_STATUS",
    "ADK_USER",
    "CONFIRM_CHECKED_UPDATE",
    "CONFIRM_SIGNAL",
    "PENDING_QUERY",
    "RESUME_CHECKED_UPDATE",
    "RESUME_SIGNAL",
    "STATUS_QUERY",
    "InvocationInput",
]

CONFIRM_SIGNAL = "adk_confirm"
"""Signal answering a confirmation request."""
CONFIRM_CHECKED_UPDATE = "adk_confirm_checked"
"""Update answering a confirmation request, rejecting unknown or answered ids."""
RESUME_SIGNAL = "adk_resume"
"""Signal answering an input request."""
RESUME_CHECKED_UPDATE = "adk_resume_checked"
"""Update answering an input request, rejecting unknown ids and schema violations."""
PENDING_QUERY = "adk_pending"
"""Query returning the open requests."""
STATUS_QUERY = "adk_status"
"""Query returning the invocation's status."""

ADK_APP = SearchAttributeKey.for_keyword("AdkApp")
"""Search attribute: the app name."""
ADK_USER = SearchAttributeKey.for_keyword("AdkUser")
"""Search attribute: the user id."""
ADK_SESSION = SearchAttributeKey.for_keyword("AdkSession")
"""Search attribute: the session id."""
ADK_AGENT = SearchAttributeKey.for_keyword("AdkAgent")
"""Search attribute: the agent the invocation was started with."""
ADK_STATUS = SearchAttributeKey.for_keyword("AdkStatus")
"""Search attribute: running / awaiting_confirmation / awaiting_input / completed / failed."""


class InvocationInput(BaseModel):
    """Start input of ``InvocationWorkflow``.

    ``continue_as_new_after_events`` bounds a run's history length: at the next step
    boundary or pause past it, the invocation continues as a new run (Temporal's own
    suggestion is always honoured too). ``carry`` is set only by the workflow itself.
    """

    app_name: str
    user_id: str
    session_id: str
    agent_name: str
    message: types.Content | None = None
    invocation_id: str | None = None
    max_steps: int = 25
    model_timeout_seconds: float = 120.0
    model_maximum_attempts: int = 10
    tool_timeout_seconds: float = 300.0
    continue_as_new_after_events: int | None = None
    budgets: Budgets = Field(default_factory=Budgets)
    carry: InvocationCarry | None = None
