"""Multi-agent scenarios shared by the integration tests and the replay recorder."""

from __future__ import annotations

from typing import Any

from google.genai import types

from adk_temporal.agents import (
    Agent,
    AgentTool,
    BaseAgent,
    LoopAgent,
    ParallelAgent,
    SequentialAgent,
)
from adk_temporal.context import ToolContext
from adk_temporal.examples.weather import buy_weather_report, get_weather
from adk_temporal.models import (
    LlmRequest,
    LlmResponse,
    Model,
    ModelFactory,
    ModelRegistry,
    ScriptedModel,
)
from adk_temporal.tools import tool

__all__ = ["RecordingModel", "multi_agent_app", "recorded"]


class RecordingModel(ScriptedModel):
    """A scripted model that keeps every request it was sent, for assertions on history."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.requests: list[LlmRequest] = []

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """Record ``request``, then answer it from the script."""
        self.requests.append(request)
        return await super().generate(request)


def _call(name: str, **args: Any) -> types.FunctionCall:
    return types.FunctionCall(name=name, args=args)


def _always(model: Model) -> ModelFactory:
    """A factory that returns ``model`` whatever name it is asked for."""
    return lambda _name: model


def _writer(name: str, key: str):  # type: ignore[no-untyped-def]
    async def write(ctx: ToolContext) -> dict[str, Any]:
        assert ctx.artifacts is not None
        version = await ctx.artifacts.save("notes.txt", types.Part(text=f"from {name}"))
        ctx.state[key] = name
        ctx.state["last_writer"] = name
        return {"version": version}

    write.__name__ = f"write_{name}"
    write.__doc__ = f"Write notes.txt as {name}."
    return write


def escalate(ctx: ToolContext) -> dict[str, Any]:
    """Hand control back to the parent agent."""
    ctx.actions.escalate = True
    return {"result": "escalated"}


def count_pass(ctx: ToolContext) -> dict[str, Any]:
    """Count one pass of a loop in state ``passes``."""
    passes = int(ctx.state.get("passes", 0)) + 1
    ctx.state["passes"] = passes
    return {"passes": passes}


@tool(require_confirmation=True)
def stamp(ctx: ToolContext) -> dict[str, Any]:
    """Stamp the document, once approved; counts stamps in state ``stamps``."""
    stamps = int(ctx.state.get("stamps", 0)) + 1
    ctx.state["stamps"] = stamps
    return {"stamps": stamps}


def multi_agent_app() -> tuple[list[BaseAgent], ModelRegistry]:
    """Agents and scripted models of every multi-agent scenario, and their registry.

    - ``coordinator`` transfers to its sub-agent ``forecaster``, which calls get_weather
      and transfers back; the coordinator then answers.
    - ``fanout`` runs ``left`` and ``right`` in parallel; each writes state and notes.txt.
    - ``mixed`` runs ``buyer`` (needs approval) and ``reporter`` in parallel.
    - ``pipeline`` runs ``drafter`` then ``reviewer`` in sequence.
    - ``caller`` asks ``researcher`` through an AgentTool.
    - ``escalator`` transfers to its sub-agent ``checker``, which escalates and sums up
      (ADK), or hands back to escalator (``escalation="stop"``).
    - ``editing`` runs the loop ``refine`` (``polisher`` counts a pass, ``judge`` escalates
      on the second pass and sums up), then ``summarizer``.
    - ``ticking`` loops ``ticker`` (counts a pass) three times, its limit.
    - ``stamping`` loops ``stamper`` twice; each pass asks for approval to stamp.
    """
    scripts: dict[str, list[Any]] = {
        "coordinator": [_call("transfer_to_agent", agent_name="forecaster"), "Coordinator: done."],
        "forecaster": [
            _call("get_weather", city="Hangzhou"),
            _call("transfer_to_agent", agent_name="coordinator"),
        ],
        "left": [_call("write_left"), "left done"],
        "right": [_call("write_right"), "right done"],
        "buyer": [_call("buy_weather_report", city="Oslo"), "buyer done"],
        "reporter": [_call("get_weather", city="Rome"), "reporter done"],
        "drafter": ["draft: sunny all week"],
        "reviewer": ["review: the draft looks right"],
        "caller": [_call("researcher", request="find the rainiest city"), "caller: got it"],
        "researcher": ["Bergen is the rainiest city."],
        "escalator": [_call("transfer_to_agent", agent_name="checker"), "Escalator: checked."],
        "checker": [_call("escalate"), "Checker: all good."],
        "polisher": [_call("count_pass"), "polished once", _call("count_pass"), "polished twice"],
        "judge": ["not yet", _call("escalate"), "judge: good enough"],
        "summarizer": ["summary: polished twice, judged good"],
        "ticker": [x for n in (1, 2, 3) for x in (_call("count_pass"), f"tick {n}")],
        "stamper": [_call("stamp"), "stamped 1", _call("stamp"), "stamped 2"],
    }
    models = ModelRegistry()
    for name, script in scripts.items():
        model = RecordingModel(name=f"scripted:{name}", script=script)
        models.register(f"scripted:{name}", _always(model))

    def llm(name: str, **kwargs: Any) -> Agent:
        return Agent(name, f"scripted:{name}", description=f"the {name} agent", **kwargs)

    forecaster = llm("forecaster", tools=[get_weather])
    coordinator = llm("coordinator", sub_agents=[forecaster])
    fanout = ParallelAgent(
        "fanout",
        sub_agents=[
            llm("left", tools=[_writer("left", "left_key")]),
            llm("right", tools=[_writer("right", "right_key")]),
        ],
    )
    mixed = ParallelAgent(
        "mixed",
        sub_agents=[llm("buyer", tools=[buy_weather_report]), llm("reporter", tools=[get_weather])],
    )
    pipeline = SequentialAgent("pipeline", sub_agents=[llm("drafter"), llm("reviewer")])
    caller = llm("caller", tools=[AgentTool(llm("researcher"))])
    escalator = llm("escalator", sub_agents=[llm("checker", tools=[escalate])])
    refine = LoopAgent(
        "refine",
        sub_agents=[llm("polisher", tools=[count_pass]), llm("judge", tools=[escalate])],
        max_iterations=5,
    )
    editing = SequentialAgent("editing", sub_agents=[refine, llm("summarizer")])
    ticking = LoopAgent("ticking", sub_agents=[llm("ticker", tools=[count_pass])], max_iterations=3)
    stamping = LoopAgent("stamping", sub_agents=[llm("stamper", tools=[stamp])], max_iterations=2)
    agents: list[BaseAgent] = [coordinator, fanout, mixed, pipeline, caller, escalator]
    return [*agents, editing, ticking, stamping], models


def recorded(models: ModelRegistry, agent: str) -> list[LlmRequest]:
    """The requests the scripted model of ``agent`` received."""
    model = models.resolve(f"scripted:{agent}")
    assert isinstance(model, RecordingModel)
    return model.requests
