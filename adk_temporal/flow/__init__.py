"""The invocation flow, engine-neutral: Temporal runs it, and so does the in-process runner.

* :mod:`~adk_temporal.flow.invocation` — :class:`InvocationFlow`, the step loop and agent
  orchestration.
* :mod:`~adk_temporal.flow.executor` — :class:`Executor`, what an engine provides.
* :mod:`~adk_temporal.flow.requests` — :class:`RequestBook`, open requests and answers.
* :mod:`~adk_temporal.flow.messages` — the wire types steps and engines exchange.
"""

from __future__ import annotations

from .executor import Executor
from .invocation import InvocationFlow
from .requests import RequestBook

__all__ = ["Executor", "InvocationFlow", "RequestBook"]
