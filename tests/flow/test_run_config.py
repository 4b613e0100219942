"""``ctx.run_config`` is the invocation's own options, in callbacks and tools (issue 28).

ADK-Go ``agent/common_context.go`` ``RunConfig`` returns the invocation context's; before
this, steps always saw the defaults.
"""

from __future__ import annotations

from adk_temporal.run_config import RunConfig

from ..adk_scenarios import OPTIONS, expected_run_config, run_config_reader
from .conftest import LocalFactory


async def test_callbacks_and_tools_see_the_invocation_options(run_local: LocalFactory) -> None:
    """Started with max_steps=7, a token budget and a tool timeout: each step sees them."""
    agent, models, seen = run_config_reader()
    async with run_local([agent], models=models) as rt:
        handle = await rt.adk.start("cfg", "u-1", "s-1", "reader", "go", **OPTIONS)
        assert (await handle.result()).status == "completed"
    assert seen == expected_run_config(OPTIONS)


async def test_without_options_steps_see_the_defaults(run_local: LocalFactory) -> None:
    """Nothing given: the defaults of RunConfig, the one place they live."""
    agent, models, seen = run_config_reader()
    async with run_local([agent], models=models) as rt:
        await (await rt.adk.start("cfg", "u-1", "s-1", "reader", "go")).result()
    defaults = RunConfig()
    assert seen == expected_run_config(
        {
            "max_steps": defaults.max_steps,
            "token_budget": defaults.token_budget,
            "tool_timeout_seconds": defaults.tool_timeout_seconds,
        }
    )
