"""Run scenarios on google-adk 2.13 and print what each stored, as JSON.

Runs in google-adk's own environment (it pins google-genai below 3, so it never joins
ours): ``python adk_side.py <scenario>...``, all in one process, as starting google-adk
costs more than most scenarios. Prints ``{<scenario>: {"events": [...], "state": {...},
"error": ...}}`` on its last line; a scenario the harness itself failed on has
``{"harness_error": <traceback>}`` instead, and the others are still run.
"""

from __future__ import annotations

import asyncio
import json
import sys
import traceback
import types as pytypes
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

# google-adk is only in its own environment (tests.graphs.adk_env), never in ours.
import google.adk.workflow as adk_workflow  # type: ignore[import-untyped,unused-ignore]
from google.adk.agents import LlmAgent  # type: ignore[import-untyped,unused-ignore]
from google.adk.events import RequestInput  # type: ignore[import-untyped,unused-ignore]
from google.adk.models import BaseLlm, LlmResponse  # type: ignore[import-untyped,unused-ignore]
from google.adk.runners import InMemoryRunner  # type: ignore[import-untyped,unused-ignore]
from google.adk.tools import FunctionTool  # type: ignore[import-untyped,unused-ignore]
from google.genai import types

from tests.graphs.record import event_record, normal
from tests.graphs.scenarios import SCENARIOS, Answer


class _DecidingLlm(BaseLlm):  # type: ignore[misc,unused-ignore]
    """A deterministic model: ``decide`` (the scenario's) picks each reply from the
    request's contents, as the scripted model on our side does."""

    decide: Any = None

    async def generate_content_async(
        self, llm_request: Any, stream: bool = False
    ) -> AsyncIterator[Any]:
        reply = self.decide(llm_request.contents)
        if "call" in reply:
            call = types.FunctionCall(name=reply["call"], args=reply["args"])
            part = types.Part(function_call=call)
        else:
            part = types.Part(text=reply["text"])
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def names() -> Any:
    """ADK's names, as the scenarios use them."""
    found = {n: getattr(adk_workflow, n) for n in adk_workflow.__all__}

    def model(name: str, decide: Any) -> Any:
        return _DecidingLlm(model=name, decide=decide)

    return pytypes.SimpleNamespace(
        **found,
        RequestInput=RequestInput,
        LlmAgent=LlmAgent,
        model=model,
        FunctionTool=FunctionTool,
    )


def content(message: str | Answer) -> types.Content:
    if isinstance(message, Answer):
        response = types.FunctionResponse(
            id=message.interrupt_id, name="adk_request_input", response=message.response
        )
        return types.Content(role="user", parts=[types.Part(function_response=response)])
    return types.Content(role="user", parts=[types.Part(text=message)])


async def main(name: str) -> dict[str, Any]:
    scenario = SCENARIOS[name](names())
    runner = InMemoryRunner(node=scenario.workflow, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    error = None
    for message in scenario.messages:
        try:
            async for _ in runner.run_async(
                user_id="u", session_id=session.id, new_message=content(message)
            ):
                pass
        except Exception as err:  # the run failed: compared with ours
            error = type(err).__name__
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    assert stored is not None
    return {
        "events": [event_record(e) for e in stored.events],
        "state": normal(stored.state),
        "error": error,
    }


def run_all(scenarios: list[str]) -> dict[str, Any]:
    """Each scenario's record, or how the harness failed on it."""
    done: dict[str, Any] = {}
    for name in scenarios:
        try:
            done[name] = asyncio.run(main(name))
        except Exception:
            done[name] = {"harness_error": traceback.format_exc()}
    return done


if __name__ == "__main__":
    print(json.dumps(run_all(sys.argv[1:])))
