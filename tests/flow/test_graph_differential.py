"""The same graph definitions on google-adk 2.13 and on adk-temporal's in-process runner:
the same events (per branch, in order), final state and outcome."""

from __future__ import annotations

import pytest

from tests.graphs.adk_env import run_on_adk
from tests.graphs.compare import assert_same_run
from tests.graphs.ours import IN_BOTH, PAUSING, build, run_in_process


@pytest.mark.parametrize("scenario", IN_BOTH + PAUSING)
async def test_graph_runs_as_on_adk(scenario: str) -> None:
    """A graph whose code only changes its imports stores what google-adk stores."""
    adk = run_on_adk(scenario)
    ours = await run_in_process(scenario)
    assert_same_run(ours, adk, full_order=build(scenario).ordered_across_branches)
