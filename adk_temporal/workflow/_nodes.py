"""The nodes of a graph workflow: functions, joins, and the ``node`` decorator.

Ports the behaviour of ADK 2.13's ``google/adk/workflow/_base_node.py``, ``_node.py``,
``_function_node.py`` and ``_join_node.py``: a node has a name (a Python identifier), may
rerun when a pause it raised is answered (``rerun_on_resume``), may be retried
(``retry_config``) and timed out (``timeout``). A plain function becomes a
:class:`FunctionNode`; its parameters are bound from session state by name, ``node_input``
is the output of the node before it, and a parameter named ``ctx`` (or annotated with the
node :class:`~adk_temporal.workflow.Context`) receives the node's context.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any, get_type_hints

from ..errors import WorkflowConfigurationError
from ..flow.node_retry import RetryConfig

__all__ = ["START", "BaseNode", "FunctionNode", "JoinNode", "Node"]


class BaseNode:
    """What every node of a graph shares (ADK 2's ``BaseNode``).

    Args:
        name: Unique in its graph; a Python identifier.
        description: One line about what the node does.
        rerun_on_resume: When a pause the node raised is answered, run the node again
            (it reads the answer from ``ctx.resume_inputs``) instead of taking the answer
            as its output.
        retry_config: How a failing run is retried (``None``: not retried).
        timeout: Seconds a run may take before it fails with ``NodeTimeoutError``.
        wait_for_output: The node counts as done only once it produced an output or a
            route (a join-like node run several times).

    Raises:
        WorkflowConfigurationError: The name is not a Python identifier.
    """

    def __init__(
        self,
        name: str,
        *,
        description: str = "",
        rerun_on_resume: bool = False,
        retry_config: RetryConfig | None = None,
        timeout: float | None = None,
        wait_for_output: bool = False,
    ) -> None:
        if not name.isidentifier():
            raise WorkflowConfigurationError(
                f"Node name '{name}' must be a valid Python identifier."
            )
        self.name = name
        self.description = description
        self.rerun_on_resume = rerun_on_resume
        self.retry_config = retry_config
        self.timeout = timeout
        self.wait_for_output = wait_for_output

    @property
    def requires_all_predecessors(self) -> bool:
        """Whether the node waits for every predecessor before it runs (a join)."""
        return False

    def with_options(self, **options: Any) -> BaseNode:
        """A copy of this node with the given attributes replaced."""
        copied = copy.copy(self)
        for key, value in options.items():
            setattr(copied, key, value)
        return copied

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class _Start(BaseNode):
    """The graph's entry, never run: its successors receive the workflow's input."""

    def __init__(self) -> None:
        super().__init__("__START__")


START = _Start()
"""The entry point of every graph (``"START"`` in an edge means it too)."""


def _context_param(func: Callable[..., Any]) -> str:
    """The parameter that receives the node's context: annotated with ``Context``, else
    one named ``ctx`` (ADK's rule)."""
    from ._context import Context

    try:
        hints = get_type_hints(func)
    except Exception:  # unresolvable forward references: read the names only
        hints = {}
    for name in inspect.signature(func).parameters:
        hint = hints.get(name)
        if isinstance(hint, type) and issubclass(hint, Context):
            return name
    return "ctx"


class FunctionNode(BaseNode):
    """A node running a Python function, sync or async, or a (sync or async) generator.

    What the function returns (or each item it yields) becomes an event: a value is the
    node's output, a ``RequestInput`` pauses for a person, ``types.Content`` is a message,
    ``None`` nothing (ADK 2's ``FunctionNode``, state binding).

    Args:
        func: The function.
        name: The node's name (``func.__name__`` by default).
        rerun_on_resume: See :class:`BaseNode`.
        retry_config: See :class:`BaseNode`.
        timeout: See :class:`BaseNode`.

    Raises:
        WorkflowConfigurationError: ``func`` is not callable or has no name.
    """

    def __init__(
        self,
        *,
        func: Callable[..., Any],
        name: str | None = None,
        rerun_on_resume: bool = False,
        retry_config: RetryConfig | None = None,
        timeout: float | None = None,
    ) -> None:
        if not callable(func):
            raise WorkflowConfigurationError("Function must be callable.")
        inferred = name or getattr(func, "__name__", None)
        if not inferred or inferred == "<lambda>":
            raise WorkflowConfigurationError(
                "FunctionNode must have a name. If the wrapped callable does not have a "
                "'__name__' attribute, please provide a name explicitly."
            )
        super().__init__(
            inferred,
            description=inspect.getdoc(func) or "",
            rerun_on_resume=rerun_on_resume,
            retry_config=retry_config,
            timeout=timeout,
        )
        self.func = func
        self.context_param = _context_param(func)


class JoinNode(BaseNode):
    """Waits for every predecessor, then outputs their outputs by name (ADK 2's
    ``JoinNode``)."""

    @property
    def requires_all_predecessors(self) -> bool:
        """Always: a join fires once all its predecessors have completed."""
        return True


class Node(BaseNode):
    """A node written as a class: override :meth:`run_node_impl` (ADK 2's ``Node``)."""

    def run_node_impl(self, *, ctx: Any, node_input: Any) -> AsyncIterator[Any]:
        """Yield the node's outputs, events or requests; runs on the worker.

        Raises:
            NotImplementedError: A subclass did not override it.
        """
        raise NotImplementedError("run_node_impl must be implemented.")
