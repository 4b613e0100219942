"""Models for tests ported from ADK's own: one reply list shared by every agent, in call order.

ADK's tests (``testing_utils.MockModel``) give all agents of a tree one model whose replies
are taken in the order the agents call it; ``QueueModel`` does the same, so a ported test
lists the same replies in the same order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from google.genai import types

from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry

__all__ = ["QueueModel", "Reply", "call", "queue_registry"]


Reply = str | types.FunctionCall
"""One reply of a :class:`QueueModel`: text, or one function call."""


def call(name: str, **args: Any) -> Reply:
    """A function call the model makes (typed as a reply, so a list of replies infers)."""
    return types.FunctionCall(name=name, args=args)


class QueueModel:
    """Answers each request with the next reply of a shared list; records the requests."""

    def __init__(self, name: str, replies: deque[str | types.FunctionCall]) -> None:
        self._name = name
        self._replies = replies
        self.requests: list[LlmRequest] = []

    @property
    def name(self) -> str:
        """The model name."""
        return self._name

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """The next reply: text, or one function call."""
        self.requests.append(request)
        reply = self._replies.popleft()
        part = types.Part(text=reply) if isinstance(reply, str) else types.Part(function_call=reply)
        return LlmResponse(content=types.Content(role="model", parts=[part]))


def queue_registry(
    name: str, replies: Iterable[str | types.FunctionCall]
) -> tuple[ModelRegistry, QueueModel]:
    """A registry resolving ``name`` to one :class:`QueueModel` over ``replies``."""
    model = QueueModel(name, deque(replies))
    registry = ModelRegistry()
    registry.register(name, lambda _: model)
    return registry, model
