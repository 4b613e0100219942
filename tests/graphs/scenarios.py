"""The graphs of the differential suite, written once against ADK 2's names.

Each scenario takes the names (``google.adk.workflow`` plus ``RequestInput`` on ADK, or
``adk_temporal.workflow`` here) and returns the workflow and the messages the user sends:
text starts a turn, an ``Answer`` answers a pause. Only the imports differ between the two
runs, as a user porting a graph would change them. The cases follow ADK 2.13's own tests of
``google/adk/workflow`` (``_workflow.py``, ``_graph.py``, ``_join_node.py``,
``_retry_config.py``, ``_dynamic_node_scheduler.py``).

This module is imported by the ADK side's script too: it imports nothing of either.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SCENARIOS", "Answer", "Scenario"]


@dataclass
class Answer:
    """The user's answer to pause ``interrupt_id``: ``response`` as ADK's function response."""

    interrupt_id: str
    response: dict[str, Any]


@dataclass
class Scenario:
    """A graph and what the user sends it."""

    workflow: Any
    messages: list[str | Answer] = field(default_factory=lambda: ["go"])
    ordered_across_branches: bool = False
    """Whether events of different branches keep ADK's order too (nothing runs at once)."""


def chain(w: Any) -> Scenario:
    def first(node_input: str, ctx: Any) -> dict[str, Any]:
        ctx.state["heard"] = node_input
        return {"n": len(node_input)}

    def second(node_input: dict[str, Any], ctx: Any) -> str:
        ctx.state["temp:scratch"] = "not stored"
        ctx.state["n"] = node_input["n"]
        return f"len={node_input['n']}"

    def third(node_input: str, ctx: Any) -> str:
        return f"{node_input} scratch={ctx.state.get('temp:scratch')}"

    return Scenario(w.Workflow(name="chain", edges=[(w.START, first, second, third)]), ["hello"])


def fan_out_join(w: Any) -> Scenario:
    def split(node_input: str) -> str:
        return node_input.upper()

    def left(node_input: str, ctx: Any) -> str:
        ctx.state["left"] = True
        return node_input + "-L"

    def right(node_input: str) -> str:
        return node_input + "-R"

    def merge(node_input: dict[str, Any]) -> list[Any]:
        return sorted(node_input.items())

    join = w.JoinNode(name="both")
    edges = [(w.START, split, (left, right), join, merge)]
    return Scenario(w.Workflow(name="fan", edges=edges))


def routes(w: Any) -> Scenario:
    def classify(node_input: str, ctx: Any) -> str:
        ctx.route = "greeting" if node_input.startswith("hi") else "other"
        return node_input

    def pick_many(node_input: str, ctx: Any) -> str:
        ctx.route = ["x", "y"]
        return node_input

    def check(node_input: str, ctx: Any) -> bool:
        ctx.route = len(node_input) > 100
        return False

    def greet(node_input: str) -> str:
        return "hello"

    def fallback(node_input: str) -> str:
        return "fallback"

    def on_x(node_input: str) -> str:
        return "x"

    def on_y(node_input: str) -> str:
        return "y"

    def long(node_input: bool) -> str:
        return "long"

    def nothing(node_input: Any) -> None:
        return None

    edges = [
        (w.START, classify, {"greeting": greet, w.DEFAULT_ROUTE: fallback}),
        (fallback, pick_many, {"x": on_x, "y": on_y, "z": nothing}),
        (on_x, check, {True: long}),
    ]
    return Scenario(w.Workflow(name="router", edges=edges), ["something"])


def loop(w: Any) -> Scenario:
    def count(node_input: Any, ctx: Any) -> int:
        n = int(ctx.state.get("n", 0)) + 1
        ctx.state["n"] = n
        ctx.route = "again" if n < 3 else "done"
        return n

    def finish(node_input: int) -> str:
        return f"counted to {node_input}"

    edges = [(w.START, count), (count, {"again": count, "done": finish})]
    return Scenario(w.Workflow(name="looping", edges=edges))


def nested(w: Any) -> Scenario:
    def prepare(node_input: str) -> str:
        return "p"

    def inner_a(node_input: str) -> str:
        return node_input + "a"

    def inner_b(node_input: str) -> str:
        return node_input + "b"

    def wrap(node_input: str) -> list[str]:
        return ["wrapped", node_input]

    inner = w.Workflow(name="inner", edges=[(w.START, inner_a, inner_b)])
    return Scenario(w.Workflow(name="outer", edges=[(w.START, prepare, inner, wrap)]))


def dynamic(w: Any) -> Scenario:
    def double(node_input: int) -> int:
        return node_input * 2

    async def parent(node_input: Any, ctx: Any) -> int:
        first = int(await ctx.run_node(double, 3))
        second = int(await ctx.run_node(double, first))
        return first + second

    rerunning = w.node(parent, rerun_on_resume=True)
    return Scenario(w.Workflow(name="dyn", edges=[(w.START, rerunning)]))


def retry(w: Any) -> Scenario:
    config = w.RetryConfig(
        max_attempts=3, initial_delay=0.01, jitter=0.0, exceptions=["ValueError"]
    )

    def flaky(node_input: Any, ctx: Any) -> str:
        if ctx.attempt_count < 3:
            raise ValueError(f"attempt {ctx.attempt_count} failed")
        return "third time lucky"

    retried = w.node(flaky, retry_config=config)
    return Scenario(w.Workflow(name="retrying", edges=[(w.START, retried)]))


def retry_unlisted(w: Any) -> Scenario:
    config = w.RetryConfig(
        max_attempts=3, initial_delay=0.01, jitter=0.0, exceptions=["ValueError"]
    )

    def broken(node_input: Any) -> str:
        raise KeyError("not retried")

    retried = w.node(broken, retry_config=config)
    return Scenario(w.Workflow(name="unlisted", edges=[(w.START, retried)]))


def timeout(w: Any) -> Scenario:
    async def slow(node_input: Any) -> str:
        await asyncio.sleep(60)
        return "late"

    timed = w.node(slow, timeout=0.5)
    return Scenario(w.Workflow(name="timing", edges=[(w.START, timed)]))


def max_concurrency(w: Any) -> Scenario:
    def source(node_input: Any) -> int:
        return 1

    def make(name: str) -> Callable[..., Any]:
        async def work(node_input: int, ctx: Any) -> str:
            ctx.state[name] = ctx.state.get("running", 0)
            await asyncio.sleep(0)
            return name

        work.__name__ = name
        return work

    branches = tuple(make(n) for n in ("one", "two", "three"))
    join = w.JoinNode(name="all")

    def total(node_input: dict[str, Any]) -> list[str]:
        return sorted(node_input.values())

    edges = [(w.START, source, branches, join, total)]
    graph = w.Workflow(name="limited", edges=edges, max_concurrency=1)
    return Scenario(graph, ordered_across_branches=True)


def two_terminals(w: Any) -> Scenario:
    def start(node_input: Any) -> str:
        return "s"

    def end_a(node_input: str) -> str:
        return "a"

    def end_b(node_input: str) -> str:
        return "b"

    return Scenario(w.Workflow(name="twoends", edges=[(w.START, start, (end_a, end_b))]))


def pause(w: Any) -> Scenario:
    def ask(node_input: Any) -> Any:
        return w.RequestInput(interrupt_id="q-name", message="Your name?", payload={"form": 1})

    def greet(node_input: str) -> str:
        return f"hello {node_input}"

    graph = w.Workflow(name="asking", edges=[(w.START, ask, greet)])
    return Scenario(graph, ["go", Answer("q-name", {"result": '"bob"'})])


def pause_rerun(w: Any) -> Scenario:
    def ask(node_input: Any, ctx: Any) -> Any:
        if "q-age" in ctx.resume_inputs:
            return {"age": ctx.resume_inputs["q-age"]}
        return w.RequestInput(interrupt_id="q-age", message="Your age?")

    def done(node_input: dict[str, Any], ctx: Any) -> str:
        ctx.state["age"] = node_input["age"]
        return "noted"

    rerun = w.node(ask, rerun_on_resume=True)
    graph = w.Workflow(name="rerunning", edges=[(w.START, rerun, done)])
    return Scenario(graph, ["go", Answer("q-age", {"years": 7})])


def pause_in_branch(w: Any) -> Scenario:
    def split(node_input: Any) -> str:
        return "s"

    def approve(node_input: str) -> Any:
        return w.RequestInput(interrupt_id="q-ok", message="Approve?")

    def compute(node_input: str, ctx: Any) -> int:
        ctx.state["computed"] = 42
        return 42

    def finish(node_input: dict[str, Any]) -> list[Any]:
        return sorted(str(v) for v in node_input.values())

    join = w.JoinNode(name="gate")
    edges = [(w.START, split, (approve, compute), join, finish)]
    graph = w.Workflow(name="branching", edges=edges)
    return Scenario(graph, ["go", Answer("q-ok", {"result": True})])


def forecast_reply(contents: list[Any]) -> dict[str, Any]:
    """The scripted model of :func:`llm_tool` (the same on both sides): a function response
    in the request is summarised, else the user's city is looked up with the tool."""
    for content in reversed(contents):
        for part in content.parts or []:
            if part.function_response is not None:
                sky = part.function_response.response.get("sky")
                return {"text": f"{part.function_response.response.get('city')} is {sky}"}
            if part.text and content.role == "user":
                return {"call": "get_weather", "args": {"city": part.text}}
    return {"text": "no city"}


def llm_tool(w: Any) -> Scenario:
    def prepare(node_input: str, ctx: Any) -> str:
        ctx.state["asked"] = node_input
        return node_input.strip().title()

    def get_weather(city: str, tool_context: Any) -> dict[str, Any]:
        """The weather in a city."""
        tool_context.state["looked_up"] = city
        return {"city": city, "sky": "sunny"}

    forecaster = w.LlmAgent(
        name="forecaster",
        model=w.model("forecast-model", forecast_reply),
        instruction="Tell the weather of the city you are given.",
        tools=[get_weather],
        output_key="forecast",
    )

    def report(node_input: str, ctx: Any) -> str:
        return f"report: {node_input}"

    graph = w.Workflow(name="weather_graph", edges=[(w.START, prepare, forecaster, report)])
    return Scenario(graph, ["  hangzhou "])


def tool_node(w: Any) -> Scenario:
    def prepare(node_input: str) -> dict[str, Any]:
        return {"a": len(node_input), "b": 2}

    def multiply(a: int, b: int, tool_context: Any) -> int:
        """Multiply two numbers."""
        tool_context.state["multiplied"] = [a, b]
        return a * b

    def add_one(base: int) -> int:
        """Add one."""
        return base + 1

    def finish(node_input: int) -> str:
        return f"got {node_input}"

    edges = [(w.START, prepare, w.FunctionTool(multiply), w.FunctionTool(add_one), finish)]
    return Scenario(w.Workflow(name="tooling", edges=edges), ["four"])


SCENARIOS: dict[str, Callable[[Any], Scenario]] = {
    "chain": chain,
    "fan_out_join": fan_out_join,
    "routes": routes,
    "loop": loop,
    "nested": nested,
    "dynamic": dynamic,
    "retry": retry,
    "retry_unlisted": retry_unlisted,
    "timeout": timeout,
    "max_concurrency": max_concurrency,
    "two_terminals": two_terminals,
    "pause": pause,
    "pause_rerun": pause_rerun,
    "pause_in_branch": pause_in_branch,
    "llm_tool": llm_tool,
    "tool_node": tool_node,
}
"""Every scenario by name."""
