"""A registry's models live as long as some worker holds it, and are closed by the last one."""

from __future__ import annotations

from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry


class ClosableModel:
    """A model that counts how often it was closed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.closed = 0

    async def generate(self, request: LlmRequest) -> LlmResponse:
        return LlmResponse()

    async def aclose(self) -> None:
        self.closed += 1


class PlainModel:
    """A model with nothing to close."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def generate(self, request: LlmRequest) -> LlmResponse:
        return LlmResponse()


def _registry() -> ModelRegistry:
    registry = ModelRegistry()
    registry.register("closable", ClosableModel)
    registry.register("plain", PlainModel)
    return registry


async def test_the_last_holder_closes_each_model_once_and_the_next_resolve_builds_anew() -> None:
    registry = _registry()
    async with registry.in_use():
        async with registry.in_use():
            model = registry.resolve("closable")
            assert isinstance(model, ClosableModel)
            registry.resolve("plain")
        assert model.closed == 0
        assert registry.resolve("closable") is model
    assert model.closed == 1
    fresh = registry.resolve("closable")
    assert fresh is not model
    assert model.closed == 1


async def test_a_holder_that_fails_still_lets_go() -> None:
    registry = _registry()
    model = registry.resolve("closable")
    assert isinstance(model, ClosableModel)
    try:
        async with registry.in_use():
            raise RuntimeError("worker crashed")
    except RuntimeError:
        pass
    assert model.closed == 1
    async with registry.in_use():
        again = registry.resolve("closable")
    assert isinstance(again, ClosableModel)
    assert again.closed == 1
