"""Console sign-in sessions: bounded per principal and in all, so no token signs others out."""

from __future__ import annotations

from adk_temporal.web.cookies import ConsoleSessions

WEATHER = frozenset({"weather"})
OTHER = frozenset({"other"})


def test_another_apps_token_signing_in_past_the_global_cap_signs_nobody_else_out() -> None:
    """A token of another app signing in more times than the gateway keeps sessions in all
    (10,001 sign-ins) evicts only its own oldest sessions."""
    sessions = ConsoleSessions()
    mine = sessions.sign_in(WEATHER, now=1000.0)
    flood = [sessions.sign_in(OTHER, now=1001.0) for _ in range(10_001)]
    assert sessions.scope(mine, now=1002.0) == WEATHER
    assert sessions.scope(flood[-1], now=1002.0) == OTHER
    assert sessions.scope(flood[0], now=1002.0) is None


def test_a_principal_over_its_cap_loses_its_own_oldest_sessions_first() -> None:
    """Past ``most_per_principal`` a principal's oldest session goes; other principals of
    the same scope keep theirs."""
    sessions = ConsoleSessions(most_per_principal=3)
    theirs = sessions.sign_in(WEATHER, now=1.0, principal="token:b")
    own = [sessions.sign_in(WEATHER, now=2.0, principal="token:a") for _ in range(5)]
    assert [sessions.scope(s, now=3.0) for s in own] == [None, None, WEATHER, WEATHER, WEATHER]
    assert sessions.principal(own[-1], now=3.0) == "token:a"
    assert sessions.scope(theirs, now=3.0) == WEATHER


def test_a_full_gateway_takes_the_oldest_session_of_the_biggest_holder() -> None:
    """With every principal under its own cap but the gateway full, the next sign-in
    evicts a session of whoever holds the most, never of a small holder."""
    sessions = ConsoleSessions(most=4, most_per_principal=3)
    small = sessions.sign_in(WEATHER, now=1.0, principal="token:small")
    big = [sessions.sign_in(OTHER, now=2.0, principal="token:big") for _ in range(3)]
    newcomer = sessions.sign_in(WEATHER, now=3.0, principal="token:new")
    assert sessions.scope(small, now=4.0) == WEATHER
    assert sessions.scope(newcomer, now=4.0) == WEATHER
    assert [sessions.scope(s, now=4.0) for s in big] == [None, OTHER, OTHER]


def test_expired_sessions_make_room_before_anyone_is_evicted() -> None:
    """Sessions past their lifetime are forgotten at the next sign-in, so a full gateway
    evicts nobody who is still signed in."""
    sessions = ConsoleSessions(most=2)
    sessions.sign_in(OTHER, now=0.0, principal="token:old")
    kept = sessions.sign_in(WEATHER, now=13 * 3600.0 - 1, principal="token:kept")
    fresh = sessions.sign_in(WEATHER, now=13 * 3600.0, principal="token:fresh")
    assert sessions.scope(kept, now=13 * 3600.0) == WEATHER
    assert sessions.scope(fresh, now=13 * 3600.0) == WEATHER


def test_signing_out_frees_the_principals_place() -> None:
    """A signed-out session no longer counts against its principal's cap."""
    sessions = ConsoleSessions(most_per_principal=1)
    first = sessions.sign_in(WEATHER, now=1.0, principal="token:a")
    sessions.sign_out(first)
    assert sessions.principal(first, now=2.0) is None
    second = sessions.sign_in(WEATHER, now=2.0, principal="token:a")
    assert sessions.scope(second, now=3.0) == WEATHER
