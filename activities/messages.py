"""What crosses the activity boundary: one input model and one result model per activity.

Inputs carry ids and the new content of this step, never the conversation so far (the
activity reads that from the session service worker-side), so workflow history grows
linearly with the number of steps. Models only grow by adding defaulted fields.
"""

from __future__ import annotations

from typing import Any, Literal

from google.genai import types
from pydantic import BaseModel, Field

from adk_temporal.events import Event, EventActions, ToolConfirmation

__all__ = [
    "AgentSpec",
    "AppendEventsInput",
    "InvocationRef",
    "ModelStepInput",
    "ModelStepResult",
    "PlannedCall",
    "ToolCallInput",
    "ToolCallResult",
    "ToolOptions",
]


class InvocationRef(BaseModel):
    """Where an activity finds its work: the session, agent and invocation ids.

    Nothing the activity can learn from ``activity.info()`` is repeated in every input of
    the history: the workflow id never, and the app, user and session ids only when the
    workflow id does not already spell them (``adk/{app}/{user}/{session}``). Activities
    call :meth:`resolved` first.
    """

    app_name: str = ""
    user_id: str = ""
    session_id: str = ""
    agent_name: str
    invocation_id: str
    branch: str = ""
    isolation_scope: str = ""

    def without_session_ids(self, workflow_id: str) -> InvocationRef:
        """This ref minus the ids ``workflow_id`` spells (unchanged when it spells others)."""
        if workflow_id.split("/", 3) != ["adk", self.app_name, self.user_id, self.session_id]:
            return self
        return self.model_copy(update={"app_name": "", "user_id": "", "session_id": ""})

    def resolved(self, workflow_id: str) -> InvocationRef:
        """This ref with the ids :meth:`without_session_ids` left out read back.

        Raises:
            ValueError: The ids are missing and ``workflow_id`` does not spell them.
        """
        if self.app_name:
            return self
        parts = workflow_id.split("/", 3)
        if len(parts) != 4 or parts[0] != "adk":
            raise ValueError(f"workflow id {workflow_id!r} does not name a session")
        return self.model_copy(
            update={"app_name": parts[1], "user_id": parts[2], "session_id": parts[3]}
        )


class ToolOptions(BaseModel):
    """Activity options a tool asked for (``tool(...)`` decorator), in seconds."""

    start_to_close_seconds: float | None = None
    heartbeat_seconds: float | None = None
    maximum_attempts: int | None = None
    initial_interval_seconds: float | None = None
    backoff_coefficient: float | None = None
    maximum_interval_seconds: float | None = None
    non_retryable_error_types: list[str] | None = None


class PlannedCall(BaseModel):
    """A function call the model asked for, with what the workflow needs to run it.

    ``agent_tool`` names the agent to run when the called tool is an ``AgentTool``: the
    workflow runs that agent itself instead of scheduling a tool activity.
    """

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    options: ToolOptions = Field(default_factory=ToolOptions)
    agent_tool: str | None = None

    def summary(self) -> str:
        """The call as a user reads it in the Temporal UI: ``get_weather(city='Hangzhou')``."""
        shown = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        text = f"{self.name}({shown})"
        return text if len(text) <= 200 else text[:197] + "..."

    def to_function_call(self) -> types.FunctionCall:
        """The call as a ``types.FunctionCall``."""
        return types.FunctionCall(id=self.id, name=self.name, args=dict(self.args))


class ModelStepInput(BaseModel):
    """Input of ``model_step``: append ``pending_events``, then call the model once."""

    ref: InvocationRef
    step: int
    model_event_id: str
    pending_events: list[Event] = Field(default_factory=list)
    temp_state: dict[str, Any] = Field(default_factory=dict)
    run_before_agent: bool = False
    describe: bool = False
    timestamp: float = 0.0


class ModelStepResult(BaseModel):
    """Result of ``model_step``: the calls to run, or the end of the agent's turn.

    ``kind`` tags the control flow: ``calls`` (run ``function_calls``), ``final`` (the agent
    answered ``text``), ``ended`` (a callback ended the invocation), ``error`` (the model
    returned an error response, recorded as an event) or ``delegate`` (the agent is not an
    LLM agent: no model was called, ``tree`` says what to run). ``tree`` is set when the
    input asked to ``describe`` the agent.
    """

    kind: Literal["calls", "final", "ended", "error", "delegate"]
    function_calls: list[PlannedCall] = Field(default_factory=list)
    text: str = ""
    error_code: str | None = None
    error_message: str | None = None
    actions: EventActions = Field(default_factory=EventActions)
    tree: AgentSpec | None = None


class ToolCallInput(BaseModel):
    """Input of ``tool_call``: one function call, and the answers it may re-enter with."""

    ref: InvocationRef
    call: PlannedCall
    tool_confirmation: ToolConfirmation | None = None
    resume_inputs: dict[str, Any] = Field(default_factory=dict)
    temp_state: dict[str, Any] = Field(default_factory=dict)


class ToolCallResult(BaseModel):
    """Result of ``tool_call``: the function response and the deltas the tool recorded."""

    response: dict[str, Any]
    actions: EventActions = Field(default_factory=EventActions)


class AppendEventsInput(BaseModel):
    """Input of ``append_events``: events decided in the workflow, appended idempotently."""

    ref: InvocationRef
    events: list[Event]


class AgentSpec(BaseModel):
    """An agent's kind and sub-agents: all the workflow needs to orchestrate it."""

    name: str
    kind: Literal["llm", "sequential", "parallel"]
    sub_agents: list[AgentSpec] = Field(default_factory=list)
    parent: str | None = None

    def find(self, name: str) -> AgentSpec | None:
        """The agent called ``name`` in this tree, or ``None``."""
        if self.name == name:
            return self
        for sub in self.sub_agents:
            found = sub.find(name)
            if found is not None:
                return found
        return None
