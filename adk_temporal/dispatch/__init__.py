"""Where a step runs: on the worker that runs the run's workflow task, or through the server.

A step Temporal dispatches (an activity) is two round trips to the server and a workflow
task of its own when it ends; a short step run by the worker that holds the run (a local
activity) is neither. :class:`LocalSteps` is an app's choice of which steps may run that
way, :class:`StepTimings` what its worker measured of its steps so far: a model step runs
locally while its agent's steps are short, a tool's call while the tool is declared for it
and short. The worker tells the run in the step replies it records (the agent tree, each
planned call's options), so a replay never depends on what a worker measured.
"""

from __future__ import annotations

from .local import LocalSteps, LocalStepsError
from .timings import StepTimings

__all__ = ["LocalSteps", "LocalStepsError", "StepTimings"]
