"""The benchmark agent on Temporal's official ADK plugin (``temporalio-google-adk``).

Same conversation as ours and the bare workflow's: "look up tN" → K parallel ``lookup``
calls (~1 KB each, run as activities) → a short answer, from an instant fake model that runs
in the plugin's model activity. As in the plugin's own design, one workflow holds the whole
session: an ADK ``InMemoryRunner`` inside the workflow, every turn a ``run_async`` call.

Only importable where ``temporalio-google-adk`` is installed (see ``official_plugin.py``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from datetime import timedelta
from typing import ClassVar

from _bare import tool_result
from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm, LLMRegistry
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types
from temporalio import activity, workflow
from temporalio.google_adk import TemporalModel
from temporalio.google_adk.workflow import activity_as_tool

__all__ = ["MODEL_NAME", "InstantModel", "OfficialInput", "OfficialSessionWorkflow", "lookup"]

MODEL_NAME = "bench-instant"
"""The fake model's name in ADK's ``LLMRegistry``."""


class InstantModel(BaseLlm):
    """Replies at once: K ``lookup`` calls for "look up X", a short text after responses."""

    tools_per_turn: ClassVar[int] = 2

    @classmethod
    def supported_models(cls) -> list[str]:
        """The names this class serves in ``LLMRegistry``."""
        return [MODEL_NAME]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """One reply to the request's last content."""
        parts = list(llm_request.contents[-1].parts or [])
        answered = [p.function_response for p in parts if p.function_response]
        if answered:
            text = " ".join(f"Found {(r.response or {}).get('topic')}." for r in answered)
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))
            return
        topic = (parts[0].text or "").split()[-1]
        calls = [
            types.Part(
                function_call=types.FunctionCall(name="lookup", args={"topic": f"{topic}-{i}"})
            )
            for i in range(1, self.tools_per_turn + 1)
        ]
        yield LlmResponse(content=types.Content(role="model", parts=calls))


@activity.defn(name="lookup_activity")
async def lookup(topic: str) -> dict[str, str]:
    """Look a topic up (returns ~1 KB)."""
    return tool_result(topic)


@dataclass
class OfficialInput:
    """Start input: the session's turns."""

    turns: int


@workflow.defn(name="OfficialSessionWorkflow")
class OfficialSessionWorkflow:
    """Runs ``turns`` turns of the benchmark agent in one ADK session, in this workflow."""

    @workflow.run
    async def run(self, inp: OfficialInput) -> int:
        """Run the turns; returns how many ran."""
        agent = LlmAgent(
            name="bench",
            model=TemporalModel(MODEL_NAME),
            tools=[activity_as_tool(lookup, start_to_close_timeout=timedelta(seconds=120))],
        )
        runner = InMemoryRunner(agent=agent, app_name="bench")
        session = await runner.session_service.create_session(app_name="bench", user_id="u")
        for turn in range(1, inp.turns + 1):
            message = types.Content(role="user", parts=[types.Part(text=f"look up t{turn}")])
            async for _ in runner.run_async(
                user_id="u", session_id=session.id, new_message=message
            ):
                pass
        return inp.turns


LLMRegistry.register(InstantModel)
