"""A plain function as the compaction summarizer.

A compaction's summarizer is a model the worker resolves by name
(``EventsCompactionConfig.summarizer_model``), so the name is all that crosses into workflow
history. A function joins the same way: wrapped in :class:`FunctionSummarizer` and
registered under a name in the worker's :class:`~adk_temporal.models.ModelRegistry`. It runs
in the compaction step, on the worker, retried like any model call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from google.genai import types

from .asyncutil import maybe_await
from .models import LlmRequest, LlmResponse

__all__ = ["FunctionSummarizer", "SummaryFunction"]

SummaryFunction = Callable[[str], str | Awaitable[str]]
"""Takes the summarizer's prompt followed by the conversation as text; returns the summary."""


class FunctionSummarizer:
    """A model whose every reply is what ``func`` returns for the request's text.

    Args:
        name: The model name it is registered and configured under.
        func: The summary function, sync or async.
    """

    def __init__(self, name: str, func: SummaryFunction) -> None:
        self._name = name
        self._func = func

    @property
    def name(self) -> str:
        """The model name."""
        return self._name

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """Call the function with the request's text; its answer is the summary.

        Raises:
            TypeError: The function returned something other than text.
        """
        text = "\n\n".join(p.text for c in request.contents for p in c.parts or [] if p.text)
        summary = await maybe_await(self._func(text))
        if not isinstance(summary, str):
            raise TypeError(
                f"summarizer {self._name!r} returned {type(summary).__name__}, not the "
                "summary's text"
            )
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=summary)]))
