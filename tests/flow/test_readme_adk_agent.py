"""docs/coming-from-adk.md's "An ADK agent as written" runs as printed: templated and provided
instructions, a transfer, a long-running tool answered later, the follow-up message."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from adk_temporal.agents import Agent
from adk_temporal.flow.messages import PendingInput
from adk_temporal.ids import SessionKey

from ..adk_models import Reply, call, queue_registry
from .conftest import LocalFactory

PAGE = Path(__file__).resolve().parents[2] / "docs" / "coming-from-adk.md"
MODEL = "gemini-2.5-flash"


def _agents() -> dict[str, Any]:
    text = PAGE.read_text()
    found = re.search(r"## An ADK agent as written\n.*?```python\n(.*?)```", text, re.S)
    assert found is not None, "the page lost its ADK agent example"
    namespace: dict[str, Any] = {}
    exec(compile(found.group(1), "coming-from-adk.md", "exec"), namespace)
    return namespace


async def test_the_readme_adk_agent_waits_for_approval_and_reimburses(
    run_local: LocalFactory,
) -> None:
    """front_desk transfers; approver asks, says it is pending, and the run waits for the
    call's response; the response resumes it and approver pays; the next message goes to
    approver, whose instruction was filled from state."""
    agents = _agents()
    front_desk: Agent = agents["front_desk"]
    replies: list[Reply] = [
        call("transfer_to_agent", agent_name="approver"),
        call("ask_for_approval", amount=120),
        "Your request is pending approval.",
        call("reimburse", amount=120),
        "Paid 120.",
        "Anything else?",
    ]
    models, model = queue_registry(MODEL, replies)
    key = SessionKey("finance", "u-1", "s-1")
    async with run_local([front_desk], models=models) as rt:
        await rt.sessions.create(key, state={"user:name": "Ada", "app:company": "Acme"})
        handle = await rt.adk.start(*key, "front_desk", "Reimburse 120 please")
        await handle.wait_for_status("awaiting_input", timeout=30)
        [request] = await handle.pending()
        await handle.resume(request.id, {"status": "approved"})
        result = await handle.result()
        follow_up = await rt.adk.start(*key, "front_desk", "thanks")
        await follow_up.result()
        agent = (await follow_up.status()).agent
    assert isinstance(request, PendingInput)
    assert (request.tool, request.long_running) == ("ask_for_approval", True)
    assert (result.status, result.final_text) == ("completed", "Paid 120.")
    assert agent == "approver"
    approver_system = model.requests[1].system_instruction or ""
    assert approver_system.startswith("You work for Acme.\n\nHelp Ada. Amounts over  need")
    assert "front_desk" in approver_system  # the parent, its only transfer target
    assert "Greet Ada" in (model.requests[0].system_instruction or "")
