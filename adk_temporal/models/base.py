"""The ``Model`` protocol and the registry that turns a model name into a live model.

Agents name their model with a string (``gemini-2.5-flash``, ``scripted:weather``); only
that string crosses the Temporal boundary. Each worker resolves it through its own
:class:`ModelRegistry`, so credentials and clients stay on the worker.
"""

from __future__ import annotations

import fnmatch
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Protocol, runtime_checkable

from adk_temporal.errors import UnknownModelError
from adk_temporal.models.gemini import GeminiModel
from adk_temporal.models.llm import LlmRequest, LlmResponse
from adk_temporal.models.scripted import weather_model

__all__ = [
    "Model",
    "ModelFactory",
    "ModelRegistry",
    "StreamingModel",
    "default_registry",
    "stream_model",
]


@runtime_checkable
class Model(Protocol):
    """Anything that answers an :class:`LlmRequest` with an :class:`LlmResponse`."""

    @property
    def name(self) -> str:
        """The model's name."""
        ...

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """Make one model call.

        Args:
            request: The conversation and what the model may do next.

        Returns:
            The reply; a reply the API produced but that is unusable carries
            ``error_code``/``error_message`` instead of raising.

        Raises:
            ModelUnavailableError: A failure a retry may fix (rate limit, 5xx, transport).
            ModelRequestError: The API refused the request; retrying cannot help.
        """
        ...


@runtime_checkable
class StreamingModel(Model, Protocol):
    """A :class:`Model` that can also yield its reply while the reply is being produced."""

    def generate_stream(self, request: LlmRequest) -> AsyncGenerator[LlmResponse, None]:
        """Make one model call, yielding partial chunks and then the complete reply.

        Implemented as an ``async def`` generator. Errors are raised as by
        :meth:`Model.generate`, also after some chunks were yielded.

        Args:
            request: The conversation and what the model may do next.

        Yields:
            Zero or more responses with ``partial=True``, each holding only the text that is
            new since the previous one, then exactly one with ``partial=False``: the whole
            reply, equal to what ``generate`` returns for it.
        """
        ...


async def stream_model(model: Model, request: LlmRequest) -> AsyncGenerator[LlmResponse, None]:
    """Stream ``model``'s reply: its ``generate_stream`` when it has one, else ``generate``.

    A model without ``generate_stream`` yields one item, the result of ``generate``, so a
    caller can always consume a stream and take its last item as the reply. A caller that may
    stop early should close it (``contextlib.aclosing``), which closes the model's stream.

    Args:
        model: Any model; only models implementing :class:`StreamingModel` stream chunks.
        request: The conversation and what the model may do next.

    Yields:
        The partial chunks, if any, then the complete reply with ``partial=False``.

    Raises:
        ModelUnavailableError: As raised by the model.
        ModelRequestError: As raised by the model.
    """
    if isinstance(model, StreamingModel):
        stream = model.generate_stream(request)
        try:
            async for response in stream:
                yield response
        finally:
            # A caller that stops early closes the model's stream (and its HTTP response) now,
            # not whenever the garbage collector gets to it.
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
    else:
        yield await model.generate(request)


ModelFactory = Callable[[str], Model]
"""Builds the model for a resolved name; called once per name."""


class ModelRegistry:
    """Maps exact model names and ``fnmatch`` patterns to factories, caching one model per name.

    Resolution tries the exact names first, then the patterns in registration order; the
    first match builds the model. Registering a name or pattern again replaces its factory
    and keeps its place in the order.
    Matching is case-sensitive.

    Workers hold the registry while they run (:meth:`in_use`); when the last one stops, the
    models it built are closed (those with an ``aclose`` coroutine method, such as
    :class:`GeminiModel` with its HTTP pools) and forgotten, so a later worker builds new ones.
    """

    def __init__(self) -> None:
        self._factories: dict[str, ModelFactory] = {}
        self._models: dict[str, Model] = {}
        self._holders = 0

    def register(self, pattern: str, factory: ModelFactory) -> None:
        """Register ``factory`` for an exact name or a pattern such as ``gemini-*``.

        Args:
            pattern: A model name or an ``fnmatch`` pattern (``*``, ``?``, ``[...]``).
            factory: Called with the resolved name the first time it is resolved.
        """
        self._factories[pattern] = factory
        # A cached model may have come from the factory being replaced.
        self._models.clear()

    def patterns(self) -> list[str]:
        """The registered names and patterns, in registration order."""
        return list(self._factories)

    def resolve(self, name: str) -> Model:
        """The model for ``name``, built on first use and reused afterwards.

        Args:
            name: The model name an agent asked for.

        Returns:
            The cached or newly built model.

        Raises:
            UnknownModelError: No registered name or pattern matches ``name``.
        """
        model = self._models.get(name)
        if model is not None:
            return model
        factory = self._factories.get(name) or next(
            (f for p, f in self._factories.items() if fnmatch.fnmatchcase(name, p)), None
        )
        if factory is None:
            known = ", ".join(repr(p) for p in self._factories) or "none"
            raise UnknownModelError(
                f"no model registered for {name!r} (registered: {known}); "
                "register a factory for it with ModelRegistry.register"
            )
        model = factory(name)
        self._models[name] = model
        return model

    @asynccontextmanager
    async def in_use(self) -> AsyncIterator[None]:
        """Hold the registry's models open for a worker's run; the last holder closes them.

        Closing them when the worker stops, on its own event loop, leaves nothing for a
        client's ``__del__`` to schedule later on whatever loop the garbage collector happens
        to run under (a workflow's, while it is being evicted).
        """
        self._holders += 1
        try:
            yield
        finally:
            self._holders -= 1
            if not self._holders:
                await self.aclose()

    async def aclose(self) -> None:
        """Close every cached model that can be closed and forget them all."""
        models, self._models = list(self._models.values()), {}
        for model in models:
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()


def default_registry() -> ModelRegistry:
    """A new registry with ``gemini-*`` (GeminiModel) and ``scripted:weather`` (the demo)."""
    registry = ModelRegistry()
    registry.register("gemini-*", GeminiModel)
    registry.register("scripted:weather", weather_model)
    return registry
