"""What forget and retention ask of every session store (``ErasableStore``), on each."""

from __future__ import annotations

from adk_temporal.ids import SessionKey
from adk_temporal.sessions import ErasableStore, SessionService


async def test_users_and_idle_sessions_are_listed_oldest_first(service: SessionService) -> None:
    """user_ids lists the app's users (from sessions and user state); idle_sessions the
    sessions last updated before a time, oldest first, up to the limit."""
    assert isinstance(service, ErasableStore)
    keys = [SessionKey("app", u, s) for u, s in (("u", "a"), ("v", "b"), ("u", "c"))]
    for key in keys:
        await service.create(key)
    await service.create(SessionKey("other", "w", "d"))
    await service.create(SessionKey("app", "x", "e"), state={"user:tier": "gold"})
    await service.delete(SessionKey("app", "x", "e"))
    assert await service.user_ids("app") == ["u", "v", "x"]
    every = await service.idle_sessions("app", before=1e12, limit=10)
    assert [key for key, _ in every] == keys
    times = [at for _, at in every]
    assert times == sorted(times)
    assert [k for k, _ in await service.idle_sessions("app", before=times[1], limit=10)] == keys[:1]
    assert [k for k, _ in await service.idle_sessions("app", before=1e12, limit=2)] == keys[:2]


async def test_deleting_a_users_state_leaves_sessions_and_other_users(
    service: SessionService,
) -> None:
    """delete_scope_state(user) clears that user's user: keys; (None) also the app's."""
    assert isinstance(service, ErasableStore)
    u, v = SessionKey("app", "u", "s"), SessionKey("app", "v", "s")
    await service.create(u, state={"user:plan": "pro", "app:motd": "hi", "own": 1})
    await service.create(v, state={"user:plan": "free"})
    await service.delete_scope_state("app", "u")
    assert await service.get_state(u) == {"app:motd": "hi", "own": 1}
    assert (await service.get_state(v))["user:plan"] == "free"
    await service.delete_scope_state("app", None)
    assert await service.get_state(v) == {}
