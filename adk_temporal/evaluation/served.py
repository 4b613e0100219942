"""Tool calls served from the record: the candidate's calls answered without running a tool.

A candidate's call is matched to a recorded call of the same session with the same name
and arguments — one of the same turn not served yet first, then one of any turn not served
yet, then one served already — and answered with what the record holds for it: each time
its handler would run, the next recorded response, with the recorded state and artifact
deltas, flags and confirmation or input requests (so approvals and inputs are asked again,
and answered from the record by the replay). The tool, and the agent's tool callbacks
around it (whose effect the recorded response already holds), never run.

An unmatched call is reported and answered with an error saying no recorded result exists,
unless a sandbox app is given: then the sandbox's tool of that name runs, against the
replay's in-memory stores. ``transfer_to_agent`` is the runtime's own tool and touches
nothing: it always runs.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..agents import TRANSFER_TOOL_NAME, AgentRegistry
from ..context import ToolContext
from ..tools import FunctionTool
from .recorded import RecordedCall, RecordedSession, RecordedStage

__all__ = ["SessionServing", "ToolServer", "call_signature"]


def call_signature(name: str, args: dict[str, Any] | None) -> str:
    """``name(args as canonical JSON)``: how calls are matched and reported."""
    return f"{name}({json.dumps(args or {}, sort_keys=True, ensure_ascii=False, default=str)})"


@dataclass
class SessionServing:
    """One replayed session's record and what was served from it."""

    record: RecordedSession
    turn: int = 0
    matched: dict[str, RecordedCall] = field(default_factory=dict)
    """Candidate call id -> the recorded call serving it."""
    runs: dict[str, int] = field(default_factory=dict)
    """Candidate call id -> how often its handler was answered."""
    inputs_given: dict[str, int] = field(default_factory=dict)
    """Candidate call id -> how many recorded input values were given to it."""
    unmatched: list[str] = field(default_factory=list)
    """Signatures of the calls no recorded call answered, in order."""
    executed: int = 0
    """Calls run in the sandbox app."""

    def match(self, call_id: str, name: str, args: dict[str, Any]) -> RecordedCall | None:
        """The recorded call answering the candidate's call ``call_id`` (see the module)."""
        if call_id in self.matched:
            return self.matched[call_id]
        wanted = call_signature(name, args)
        same = [c for c in self.record.calls if call_signature(c.name, c.args) == wanted]
        taken = {id(c) for c in self.matched.values()}
        free = [c for c in same if id(c) not in taken]
        found = next((c for c in free if c.turn == self.turn), None)
        found = found or next(iter(free), None) or next(iter(same), None)
        if found is not None:
            self.matched[call_id] = found
        return found


def _stage(call: RecordedCall, ctx: ToolContext, runs: int) -> RecordedStage | None:
    if not call.stages:
        return None
    index = runs
    # A tool with a static confirmation gate was stopped by the gate before its callbacks
    # on the first run; its first recorded stage is the gate's, which the runtime redid.
    gated_first = bool(call.stages[0].actions.requested_tool_confirmations)
    if runs == 0 and ctx.tool_confirmation is not None and gated_first:
        index = 1
    return call.stages[min(index, len(call.stages) - 1)]


def _apply(stage: RecordedStage, ctx: ToolContext) -> dict[str, Any]:
    """Record the stage's actions on ``ctx`` and return its response."""
    recorded = stage.actions
    for key, value in recorded.state_delta.items():
        ctx.state[key] = copy.deepcopy(value)
    ctx.actions.artifact_delta.update(recorded.artifact_delta)
    for confirmation in recorded.requested_tool_confirmations.values():
        ctx.request_confirmation(confirmation.hint, copy.deepcopy(confirmation.payload))
    for request in recorded.requested_inputs.values():
        ctx.request_input(request.message, request.input_schema)
    actions = ctx.actions
    actions.skip_summarization = actions.skip_summarization or recorded.skip_summarization
    actions.escalate = actions.escalate or recorded.escalate
    actions.end_invocation = actions.end_invocation or recorded.end_invocation
    actions.transfer_to_agent = recorded.transfer_to_agent or actions.transfer_to_agent
    return copy.deepcopy(stage.response)


class ToolServer:
    """The candidate agents' ``before_tool_callback``: serves every call from its session's
    record (:class:`SessionServing`, registered per session key).

    Args:
        sandbox: Agents whose tools run the calls no recorded call answers; ``None``
            answers those with an error.
    """

    def __init__(self, sandbox: AgentRegistry | None = None) -> None:
        self._sandbox = sandbox
        self.sessions: dict[tuple[str, str, str], SessionServing] = {}

    def _sandbox_tool(self, name: str) -> FunctionTool | None:
        if self._sandbox is None:
            return None
        for agent_name in self._sandbox:
            try:
                tools: Sequence[FunctionTool] = self._sandbox.tools(agent_name)
            except LookupError:
                continue  # a workflow agent: no tools
            found = next((t for t in tools if t.name == name), None)
            if found is not None:
                return found
        return None

    async def __call__(
        self, ctx: ToolContext, tool: FunctionTool, args: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Answer the call from the record; ``None`` lets ``transfer_to_agent`` run."""
        if tool.name == TRANSFER_TOOL_NAME:
            return None
        serving = self.sessions[(ctx.app_name, ctx.user_id, ctx.session_id)]
        call_id = ctx.function_call_id
        recorded = serving.match(call_id, tool.name, args)
        runs = serving.runs.get(call_id, 0)
        serving.runs[call_id] = runs + 1
        stage = _stage(recorded, ctx, runs) if recorded is not None else None
        if stage is not None:
            return _apply(stage, ctx)
        signature = call_signature(tool.name, args)
        if runs == 0:
            serving.unmatched.append(signature)
        sandboxed = self._sandbox_tool(tool.name)
        if sandboxed is not None:
            serving.executed += 1
            return await sandboxed.run(args, ctx)
        return {
            "error": f"no recorded result for {signature}: the recorded session never made "
            "this call, and a replay never runs tools"
        }
