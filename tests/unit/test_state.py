"""SPEC §1.2: state with delta recording and key scopes (CTX-B1…B7)."""

from __future__ import annotations

import pytest

from adk_temporal.context import CallbackContext, InvocationContext, ToolContext
from adk_temporal.events import EventActions
from adk_temporal.sessions.session import Session
from adk_temporal.state import ReadonlyState, State, split_scopes


class _Agent:
    name = "weather_agent"


def _tool_ctx(state: dict[str, object], call_id: str) -> ToolContext:
    session = Session(id="s1", app_name="app", user_id="u1", state=state)
    return ToolContext(InvocationContext(session=session, agent=_Agent()), call_id)


def test_ctx_b1_assignment_records_delta_and_updates_view() -> None:
    """ctx.state[key] = v records state_delta[key] and is read back by the same context."""
    ctx = _tool_ctx({"last_city": "Beijing"}, "call-1")
    ctx.state["last_city"] = "Hangzhou"
    assert ctx.actions.state_delta == {"last_city": "Hangzhou"}
    assert ctx.state["last_city"] == "Hangzhou"
    assert ctx.state.get("last_city") == "Hangzhou"


def test_ctx_b2_reads_prefer_delta_over_session_state() -> None:
    """Reads look at the delta first, then the underlying state."""
    state = State({"a": 1, "b": 2}, {"a": 10})
    assert state["a"] == 10
    assert state.get("b") == 2
    assert state.to_dict() == {"a": 10, "b": 2}
    assert sorted(state) == ["a", "b"]


def test_ctx_b3_none_valued_key_is_present() -> None:
    """A key assigned None is present: `in` is true and get() returns None, not the default."""
    ctx = _tool_ctx({}, "call-1")
    ctx.state["token"] = None
    assert "token" in ctx.state
    assert ctx.state.get("token", "default") is None
    assert ctx.actions.state_delta == {"token": None}
    assert ReadonlyState({"token": None}).get("token", "default") is None


def test_ctx_b4_mutating_read_value_records_nothing() -> None:
    """Mutating a dict or list read from state records no delta; only assignment does."""
    ctx = _tool_ctx({"prefs": {"unit": "C"}, "cities": ["Beijing"]}, "call-1")
    ctx.state["prefs"]["unit"] = "F"
    ctx.state["cities"].append("Hangzhou")
    assert ctx.actions.state_delta == {}
    assert not ctx.state.has_delta()
    ctx.state["cities"] = ["Hangzhou"]
    assert ctx.actions.state_delta == {"cities": ["Hangzhou"]}


def test_ctx_b5_prefixes_split_into_scopes() -> None:
    """app:, user: and session keys split into their scopes, prefixes kept."""
    app, user, session = split_scopes({"app:theme": "dark", "user:name": "Li", "city": "HZ"})
    assert app == {"app:theme": "dark"}
    assert user == {"user:name": "Li"}
    assert session == {"city": "HZ"}


def test_ctx_b6_temp_keys_are_visible_but_never_persisted() -> None:
    """temp: keys are readable during the invocation and dropped from every persisted scope."""
    ctx = _tool_ctx({}, "call-1")
    ctx.state["temp:scratch"] = 1
    assert ctx.state["temp:scratch"] == 1
    assert split_scopes(ctx.actions.state_delta) == ({}, {}, {})


def test_ctx_b7_parallel_tools_record_only_their_own_writes() -> None:
    """Tools of one step start from the step's state and each records only its own writes."""
    step_state = {"count": 1}
    first = _tool_ctx(dict(step_state), "call-1")
    second = _tool_ctx(dict(step_state), "call-2")
    first.state["count"] = 2
    second.state["other"] = "x"
    assert second.state["count"] == 1
    assert first.actions.state_delta == {"count": 2}
    assert second.actions.state_delta == {"other": "x"}


def test_ctx_b7_readonly_view_cannot_write() -> None:
    """A ReadonlyState reads through to its source but offers no assignment."""
    source = {"a": 1}
    view = ReadonlyState(source)
    source["a"] = 2
    assert view["a"] == 2
    with pytest.raises(TypeError):
        view["a"] = 3  # type: ignore[index]


def test_ctx_b1_update_records_every_key() -> None:
    """state.update() on a callback context records each key as a delta."""
    callback = CallbackContext(
        InvocationContext(session=Session(id="s", app_name="a", user_id="u"), agent=_Agent()),
        EventActions(),
    )
    callback.state.update({"x": 1, "y": 2})
    assert callback.actions.state_delta == {"x": 1, "y": 2}
