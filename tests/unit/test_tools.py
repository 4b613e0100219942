"""FunctionTool: declarations generated from signatures, validation, invocation, options."""

from __future__ import annotations

import enum
import threading
from datetime import date, timedelta
from typing import Any, Literal

import pytest
from pydantic import BaseModel
from temporalio.common import RetryPolicy

from adk_temporal.errors import AdkRequestError, InvalidToolArgumentsError
from adk_temporal.tools import FunctionTool, as_tool, tool


class ToolContext:
    """Stands in for adk_temporal.context.ToolContext: detection goes by the class name."""

    def __init__(self, label: str = "ctx") -> None:
        self.label = label


class Unit(enum.Enum):
    """Temperature unit."""

    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Location(BaseModel):
    """A place on the map."""

    city: str
    country: str = "CN"


class Forecast(BaseModel):
    """A tool result that is a pydantic model."""

    city: str
    day: date


def get_weather(
    city: str,
    days: int = 3,
    unit: Unit = Unit.CELSIUS,
    detail: Literal["short", "long"] = "short",
    near: Location | None = None,
    tags: list[str] | None = None,
    tool_context: ToolContext | None = None,
) -> dict[str, Any]:
    """Get the weather forecast for a city.

    Longer explanation that is not part of the description.

    Args:
        city: The city to look up,
            for example Hangzhou.
        days (int): How many days to forecast.
        unit: The temperature unit.

    Returns:
        The forecast.
    """
    return {"city": city}


def schema_of(func: Any) -> dict[str, Any]:
    """The parameters JSON schema of ``func``'s declaration."""
    schema = FunctionTool(func).declaration().parameters_json_schema
    assert isinstance(schema, dict)
    return schema


def test_declaration_name_and_description_come_from_the_function() -> None:
    """The name is the function's and the description is the docstring's first paragraph."""
    declaration = FunctionTool(get_weather).declaration()
    assert declaration.name == "get_weather"
    assert declaration.description == "Get the weather forecast for a city."


def test_each_declaration_has_its_own_schema_copy() -> None:
    """The schema is built once per tool, but a callback editing one step's declaration
    (as before-model callbacks may) leaves the next step's untouched."""
    made = FunctionTool(get_weather)
    first = made.declaration().parameters_json_schema
    assert isinstance(first, dict)
    first["properties"]["city"]["description"] = "edited"
    first["required"].append("days")
    second = made.declaration().parameters_json_schema
    assert isinstance(second, dict)
    assert second["required"] == ["city"]
    assert second["properties"]["city"]["description"].startswith("The city to look up")


def test_parameter_descriptions_come_from_the_args_section() -> None:
    """Google-style Args entries (with continuation lines and types) describe parameters."""
    properties = schema_of(get_weather)["properties"]
    assert properties["city"]["description"] == "The city to look up, for example Hangzhou."
    assert properties["days"]["description"] == "How many days to forecast."
    assert "description" not in properties["detail"]


def test_schema_has_required_fields_and_defaults() -> None:
    """Parameters without defaults are required; defaults appear in the schema."""
    schema = schema_of(get_weather)
    assert schema["type"] == "object"
    assert schema["required"] == ["city"]
    assert schema["properties"]["days"] == {
        "default": 3,
        "description": "How many days to forecast.",
        "type": "integer",
    }
    assert schema["additionalProperties"] is False


def test_schema_handles_enum_and_literal() -> None:
    """An Enum parameter and a Literal parameter both list their allowed values."""
    schema = schema_of(get_weather)
    unit = schema["properties"]["unit"]
    assert unit["default"] == "celsius"
    ref = unit["$ref"].split("/")[-1]
    assert schema["$defs"][ref]["enum"] == ["celsius", "fahrenheit"]
    assert schema["properties"]["detail"]["enum"] == ["short", "long"]


def test_schema_handles_nested_models_optional_and_lists() -> None:
    """Nested models are $defs, optional fields allow null, lists declare their items."""
    schema = schema_of(get_weather)
    near = schema["properties"]["near"]
    assert near["default"] is None
    branches = near["anyOf"]
    assert {"type": "null"} in branches
    ref = next(b["$ref"] for b in branches if "$ref" in b).split("/")[-1]
    assert schema["$defs"][ref]["required"] == ["city"]
    assert schema["$defs"][ref]["properties"]["country"]["default"] == "CN"
    tags = schema["properties"]["tags"]["anyOf"]
    assert {"type": "array", "items": {"type": "string"}} in tags


def test_context_parameter_excluded_by_annotation() -> None:
    """A parameter annotated with a class named ToolContext is not declared, whatever its name."""

    def with_context(city: str, context: ToolContext) -> str:
        return city

    tool_ = FunctionTool(with_context)
    assert tool_.context_param == "context"
    assert list(schema_of(with_context)["properties"]) == ["city"]


def test_context_parameter_excluded_by_unresolvable_string_annotation() -> None:
    """A string annotation naming ToolContext marks the context even if it cannot resolve."""

    def with_context(city: str, context: object) -> str:
        return city

    # The string annotation as `from __future__ import annotations` stores it; the module it
    # names never exists, so the annotation cannot resolve (and mypy never looks for it).
    with_context.__annotations__["context"] = "adk_temporal_missing_module.ToolContext | None"
    tool_ = FunctionTool(with_context)
    assert tool_.context_param == "context"
    assert list(schema_of(with_context)["properties"]) == ["city"]


@pytest.mark.parametrize("name", ["ctx", "tool_context"])
def test_context_parameter_excluded_by_name(name: str) -> None:
    """A parameter named ctx or tool_context receives the context, annotated or not."""
    namespace: dict[str, Any] = {}
    exec(f"def by_name(city: str, {name}):\n    return {name}", namespace)
    tool_ = FunctionTool(namespace["by_name"])
    assert tool_.context_param == name
    assert list(schema_of(namespace["by_name"])["properties"]) == ["city"]


def test_two_context_parameters_are_refused() -> None:
    """A function with two context parameters is refused, naming both."""

    def twice(ctx: Any, tool_context: ToolContext) -> None:
        return None

    with pytest.raises(TypeError, match="'ctx' and 'tool_context' both take the ToolContext"):
        FunctionTool(twice)


def test_no_parameters_declares_no_schema() -> None:
    """A tool without parameters declares none, and rejects any argument it is sent."""

    def ask_travel_dates(tool_context: ToolContext) -> str:
        return "waiting"

    tool_ = FunctionTool(ask_travel_dates)
    assert tool_.declaration().parameters_json_schema is None
    with pytest.raises(InvalidToolArgumentsError, match="when: Extra inputs are not permitted"):
        tool_.validate_args({"when": "today"})


def test_validation_error_names_missing_and_mistyped_fields() -> None:
    """A missing field and a wrong type are both named in one typed error."""
    with pytest.raises(InvalidToolArgumentsError) as caught:
        FunctionTool(get_weather).validate_args({"days": "many"})
    error = caught.value
    assert isinstance(error, AdkRequestError)
    assert isinstance(error, ValueError)
    assert error.tool_name == "get_weather"
    assert error.problems == [
        "city: Field required",
        "days: Input should be a valid integer, unable to parse string as an integer",
    ]
    assert str(error).startswith("invalid arguments for tool get_weather: city: Field required;")


def test_validation_error_names_nested_enum_and_extra_fields() -> None:
    """Nested paths, bad enum values and unexpected arguments are reported by field."""
    with pytest.raises(InvalidToolArgumentsError) as caught:
        FunctionTool(get_weather).validate_args(
            {"city": "Paris", "unit": "kelvin", "near": {"country": "FR"}, "mood": "sunny"}
        )
    problems = caught.value.problems
    assert "unit: Input should be 'celsius' or 'fahrenheit'" in problems
    assert "near.city: Field required" in problems
    assert "mood: Extra inputs are not permitted" in problems


def test_validation_returns_python_values_with_defaults() -> None:
    """Valid arguments come back coerced, as enums and models, with defaults filled in."""
    args = FunctionTool(get_weather).validate_args(
        {"city": "Paris", "days": "2", "unit": "fahrenheit", "near": {"city": "Lyon"}}
    )
    assert args == {
        "city": "Paris",
        "days": 2,
        "unit": Unit.FAHRENHEIT,
        "detail": "short",
        "near": Location(city="Lyon", country="CN"),
        "tags": None,
    }


async def test_sync_handler_runs_in_a_worker_thread_with_context() -> None:
    """A sync tool runs off the event-loop thread and receives the context."""
    seen: dict[str, Any] = {}

    def record(city: str, tool_context: ToolContext) -> str:
        seen["thread"] = threading.get_ident()
        seen["ctx"] = tool_context
        return f"sunny in {city}"

    ctx = ToolContext("sync")
    result = await FunctionTool(record).run({"city": "Paris"}, ctx)
    assert result == {"result": "sunny in Paris"}
    assert seen["ctx"] is ctx
    assert seen["thread"] != threading.get_ident()


async def test_async_handler_is_awaited_with_validated_args() -> None:
    """An async tool is awaited with validated arguments and its dict result is kept."""

    async def forecast(where: Location, ctx: Any = None) -> dict[str, Any]:
        return {"where": where, "label": ctx.label}

    result = await FunctionTool(forecast).run({"where": {"city": "Oslo"}}, ToolContext("a"))
    assert result == {"where": {"city": "Oslo", "country": "CN"}, "label": "a"}


async def test_pydantic_and_scalar_results_become_json_dicts() -> None:
    """A pydantic result is dumped to JSON values; a scalar is wrapped as {"result": ...}."""

    def model_result(city: str) -> Forecast:
        return Forecast(city=city, day=date(2025, 5, 1))

    def none_result() -> None:
        return None

    assert await FunctionTool(model_result).run({"city": "Rome"}, None) == {
        "city": "Rome",
        "day": "2025-05-01",
    }
    assert await FunctionTool(none_result).run({}, None) == {"result": None}


async def test_invalid_arguments_do_not_call_the_function() -> None:
    """run() raises the validation error and never calls the function."""
    calls: list[str] = []

    def charge(amount: int) -> None:
        calls.append("charged")

    with pytest.raises(InvalidToolArgumentsError, match="amount: Field required"):
        await FunctionTool(charge).run({}, None)
    assert calls == []


async def test_handler_errors_propagate_unchanged() -> None:
    """An exception raised by the tool reaches the caller as it was raised."""

    async def broken(city: str) -> None:
        raise RuntimeError(f"no data for {city}")

    with pytest.raises(RuntimeError, match="no data for Paris"):
        await FunctionTool(broken).run({"city": "Paris"}, None)


def test_tool_decorator_bare_and_with_options() -> None:
    """@tool and @tool(...) both make FunctionTools carrying their options."""

    @tool
    def plain(city: str) -> str:
        """Plain tool."""
        return city

    sentinel_policy = RetryPolicy(maximum_attempts=2)

    @tool(
        name="buy_report",
        description="Buy a paid report.",
        require_confirmation=True,
        start_to_close_timeout=timedelta(seconds=30),
        retry_policy=sentinel_policy,
        heartbeat_timeout=timedelta(seconds=5),
    )
    def buy(city: str) -> str:
        return city

    assert isinstance(plain, FunctionTool)
    assert plain.name == "plain" and plain.description == "Plain tool."
    assert plain.requires_confirmation({"city": "x"}) is False
    assert plain("Paris") == "Paris"
    assert buy.declaration().name == "buy_report"
    assert buy.declaration().description == "Buy a paid report."
    assert buy.requires_confirmation({"city": "x"}) is True
    assert buy.start_to_close_timeout == timedelta(seconds=30)
    assert buy.retry_policy is sentinel_policy
    assert buy.heartbeat_timeout == timedelta(seconds=5)


def test_require_confirmation_predicate_sees_the_arguments() -> None:
    """A predicate decides per call from the arguments the model sent."""

    @tool(require_confirmation=lambda args: args.get("amount", 0) > 100)
    def pay(amount: int) -> str:
        return "paid"

    assert pay.requires_confirmation({"amount": 500}) is True
    assert pay.requires_confirmation({"amount": 5}) is False
    assert pay.requires_confirmation(None) is False


def test_as_tool_wraps_functions_and_keeps_tools() -> None:
    """as_tool wraps a function once and returns an existing FunctionTool unchanged."""
    existing = FunctionTool(get_weather)
    assert as_tool(existing) is existing
    assert as_tool(get_weather).name == "get_weather"
    with pytest.raises(TypeError, match="cannot make a tool from 42"):
        as_tool(42)  # type: ignore[arg-type]


def test_undeclarable_functions_are_refused() -> None:
    """Invalid names and *args/**kwargs are refused with errors saying how to fix them."""
    with pytest.raises(ValueError, match=r"invalid tool name '<lambda>'.*pass name="):
        FunctionTool(lambda city: city)
    assert FunctionTool(lambda city: city, name="echo").name == "echo"

    def variadic(*cities: str) -> None:
        return None

    with pytest.raises(TypeError, match="parameter 'cities' is variadic positional"):
        FunctionTool(variadic)
