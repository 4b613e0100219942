"""The standing-grant store, the same on every session backend (memory, SQLite, a real
PostgreSQL): recorded once, uses counted and capped under concurrency, scopes, expiry,
revocation."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from adk_temporal.approvals import Grant, GrantGiven, GrantNotFoundError, GrantTerms
from adk_temporal.errors import InvalidSessionRequestError
from adk_temporal.ids import SessionKey
from adk_temporal.sessions import SessionService

KEY = SessionKey("shop", "u-1", "s-1")
OTHER_SESSION = SessionKey("shop", "u-1", "s-2")
OTHER_USER = SessionKey("shop", "u-2", "s-1")
NOW = 1_000_000.0


def _grant(request_id: str = "adk-1", *, scope: str = "session", max_calls: int = 2) -> Grant:
    terms = GrantTerms(
        scope=scope,  # type: ignore[arg-type]
        max_calls=max_calls,
        where="amount <= 50",
        ttl=timedelta(hours=2),
    )
    given = GrantGiven(terms=terms, request_id=request_id, granted_by="bob", at=NOW)
    return Grant.of(given, key=KEY, tool="credit", invocation_id="e-1")


async def test_a_grant_is_recorded_once_and_its_uses_are_capped(service: SessionService) -> None:
    """Recorded twice it exists once; it covers max_calls matching calls, each counted once
    however often its use id comes again, and then none."""
    grant = _grant()
    await service.record_grant(grant)
    await service.record_grant(grant)
    first = await service.use_grant(KEY, "credit", {"amount": 10}, "use-1", NOW + 1)
    again = await service.use_grant(KEY, "credit", {"amount": 10}, "use-1", NOW + 2)
    second = await service.use_grant(KEY, "credit", {"amount": 20}, "use-2", NOW + 3)
    third = await service.use_grant(KEY, "credit", {"amount": 30}, "use-3", NOW + 4)
    assert first is not None and first.id == grant.id and first.uses == 1
    assert again is not None and again.id == grant.id
    assert second is not None and second.uses == 2
    assert third is None
    [listed] = await service.list_grants("shop", "u-1")
    assert (listed.uses, listed.status(NOW + 5)) == (2, "used_up")


async def test_only_calls_the_grant_covers_take_a_use(service: SessionService) -> None:
    """Another tool, a predicate that fails, another session (of a session grant), another
    user, and a call after expiry take nothing."""
    await service.record_grant(_grant())
    assert await service.use_grant(KEY, "refund", {"amount": 1}, "u-a", NOW + 1) is None
    assert await service.use_grant(KEY, "credit", {"amount": 51}, "u-b", NOW + 1) is None
    assert await service.use_grant(OTHER_SESSION, "credit", {"amount": 1}, "u-c", NOW + 1) is None
    assert await service.use_grant(OTHER_USER, "credit", {"amount": 1}, "u-d", NOW + 1) is None
    later = NOW + timedelta(hours=2).total_seconds()
    assert await service.use_grant(KEY, "credit", {"amount": 1}, "u-e", later) is None
    [listed] = await service.list_grants("shop", "u-1")
    assert listed.uses == 0


async def test_a_user_grant_covers_every_session_of_its_user(service: SessionService) -> None:
    """A user-scoped grant is used from another session of the user; listings of either
    session include it."""
    await service.record_grant(_grant(scope="user"))
    used = await service.use_grant(OTHER_SESSION, "credit", {"amount": 5}, "u-1", NOW + 1)
    assert used is not None and used.session_id is None
    assert [g.id for g in await service.list_grants("shop", "u-1", "s-2")] == [used.id]


async def test_a_revoked_grant_covers_nothing_and_says_who_revoked_it(
    service: SessionService,
) -> None:
    """After revocation no call is covered; the grant lists who revoked it and when; an
    unknown id is refused."""
    grant = _grant()
    await service.record_grant(grant)
    revoked = await service.revoke_grant("shop", grant.id, by="carol", now=NOW + 1)
    assert (revoked.revoked_by, revoked.revoked_at) == ("carol", NOW + 1)
    assert await service.use_grant(KEY, "credit", {"amount": 5}, "u-1", NOW + 2) is None
    with pytest.raises(GrantNotFoundError):
        await service.revoke_grant("shop", "grant-nope", by="carol", now=NOW)


async def test_concurrent_calls_never_take_more_uses_than_granted(service: SessionService) -> None:
    """Ten calls at once against a 3-call grant: exactly three are covered."""
    await service.record_grant(_grant(max_calls=3))
    results = await asyncio.gather(
        *(service.use_grant(KEY, "credit", {"amount": 1}, f"use-{n}", NOW + 1) for n in range(10))
    )
    assert sum(r is not None for r in results) == 3


async def test_a_grant_with_bad_ids_is_refused(service: SessionService) -> None:
    """A grant naming an id the grammar refuses is not stored."""
    bad = _grant().model_copy(update={"user_id": "../u"})
    with pytest.raises(InvalidSessionRequestError):
        await service.record_grant(bad)
