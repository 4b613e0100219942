"""Rewind and fork over every session backend (memory, SQLite, PostgreSQL) and every
artifact backend (memory, File, GCS on a real fake-gcs-server): removal in a state delta,
the recorded initial state, restored artifacts as new versions, copies as of a point."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from adk_temporal.artifacts import (
    ArtifactService,
    GetArtifactVersionRequest,
    InMemoryArtifactService,
    LoadRequest,
    SaveRequest,
    VersionsRequest,
)
from adk_temporal.errors import (
    ArtifactServiceNotConfiguredError,
    InvalidSessionRequestError,
    InvocationNotFoundError,
    SessionBusyError,
    SessionExistsError,
    SessionNotFoundError,
)
from adk_temporal.events import Event, EventActions
from adk_temporal.ids import SessionKey
from adk_temporal.rewind import (
    REWIND_EVENT_KEY,
    REWIND_RESTORES_KEY,
    fork_session,
    rewind_session,
)
from adk_temporal.sessions import (
    REMOVED_STATE_VALUE,
    InMemorySessionService,
    PostgresSessionService,
    SessionService,
    SqliteSessionService,
)

APP = "weather"
USER = "u-1"
KEY = SessionKey(APP, USER, "s-1")
INITIAL = {"tier": "gold", "city": "Paris", "app:region": "eu", "user:name": "Ada"}


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def sessions(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionService]:
    """A fresh, empty session service of each backend, closed after the test."""
    opened: AbstractAsyncContextManager[SessionService]
    if request.param == "memory":
        opened = nullcontext(InMemorySessionService())
    elif request.param == "sqlite":
        opened = SqliteSessionService(tmp_path / "sessions.db")
    else:
        opened = PostgresSessionService(request.getfixturevalue("postgres_dsn"))
    async with opened as service:
        yield service


def _event(
    event_id: str,
    invocation_id: str,
    state: dict[str, Any] | None = None,
    artifacts: dict[str, int] | None = None,
    text: str = "",
) -> Event:
    content = types.Content(role="user", parts=[types.Part(text=text)]) if text else None
    return Event(
        id=event_id,
        invocation_id=invocation_id,
        author="user" if text else "agent",
        content=content,
        actions=EventActions(state_delta=state or {}, artifact_delta=artifacts or {}),
    )


async def _save(
    artifacts: ArtifactService, name: str, part: types.Part, key: SessionKey = KEY
) -> int:
    return (await artifacts.save(SaveRequest.of(key, file_name=name, part=part))).version


async def _load(
    artifacts: ArtifactService, name: str, version: int = 0, key: SessionKey = KEY
) -> types.Part:
    return (await artifacts.load(LoadRequest.of(key, file_name=name, version=version))).part


async def _versions(artifacts: ArtifactService, name: str, key: SessionKey = KEY) -> list[int]:
    return list((await artifacts.versions(VersionsRequest.of(key, file_name=name))).versions)


async def _metadata(artifacts: ArtifactService, name: str, version: int = 0) -> dict[str, str]:
    request = GetArtifactVersionRequest.of(KEY, file_name=name, version=version)
    return (await artifacts.get_artifact_version(request)).artifact_version.custom_metadata


async def _two_invocations(sessions: SessionService) -> dict[str, Any]:
    """Invocation e-1 then e-2 after an initial state; the state between them."""
    await sessions.create(KEY, state=INITIAL)
    await sessions.append_events(
        KEY,
        [
            _event("e-1-user", "e-1", text="first"),
            _event("e-1-a", "e-1", {"city": "Oslo", "k1": 1, "nothing": None}),
        ],
    )
    between = await sessions.get_state(KEY)
    await sessions.append_events(
        KEY,
        [
            _event("e-2-user", "e-2", text="second"),
            _event(
                "e-2-a",
                "e-2",
                {"city": "Rome", "k2": 2, "tier": "silver", "nothing": 5, "k1": None},
            ),
            _event("e-2-b", "e-2", {"user:name": "Bob", "app:region": "us", "temp:x": 1}),
        ],
    )
    return between


def _session_part(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if not k.startswith(("app:", "user:"))}


# ---------------------------------------------------------------- the stores


async def test_removal_value_removes_a_session_key_on_every_backend(
    sessions: SessionService,
) -> None:
    """A state delta holding REMOVED_STATE_VALUE removes the key; None stays a value."""
    await sessions.create(KEY, state={"a": 1, "b": 2})
    removed = dict(REMOVED_STATE_VALUE)
    await sessions.append_events(
        KEY, [_event("e-1", "i-1", {"a": removed, "b": None, "never": removed})]
    )
    assert await sessions.get_state(KEY) == {"b": None}
    assert (await sessions.get(KEY)).state == {"b": None}
    [stored] = (await sessions.get(KEY)).events
    assert stored.actions.state_delta["a"] == REMOVED_STATE_VALUE


async def test_removing_a_shared_key_is_refused_and_stores_nothing(
    sessions: SessionService,
) -> None:
    """The removal value on an app: or user: key is refused, naming the key."""
    await sessions.create(KEY, state={"user:name": "Ada"})
    for key in ("user:name", "app:region"):
        with pytest.raises(InvalidSessionRequestError, match=key):
            await sessions.append_events(
                KEY, [_event("e-1", "i-1", {key: dict(REMOVED_STATE_VALUE)})]
            )
    assert (await sessions.get(KEY)).events == []
    assert await sessions.get_state(KEY) == {"user:name": "Ada"}


async def test_initial_state_is_read_apart_from_later_writes(sessions: SessionService) -> None:
    """get_initial_state returns the session keys create set, unchanged by later events."""
    await sessions.create(KEY, state=INITIAL)
    await sessions.append_events(KEY, [_event("e-1", "i-1", {"tier": "silver", "new": 1})])
    assert await sessions.get_initial_state(KEY) == {"tier": "gold", "city": "Paris"}
    other = SessionKey(APP, USER, "s-plain")
    await sessions.create(other)
    assert await sessions.get_initial_state(other) == {}
    with pytest.raises(SessionNotFoundError):
        await sessions.get_initial_state(SessionKey(APP, USER, "s-none"))
    await sessions.delete(KEY)
    await sessions.create(KEY, state={"fresh": True})
    assert await sessions.get_initial_state(KEY) == {"fresh": True}


# ---------------------------------------------------------------- rewind: state


async def test_rewind_restores_the_state_before_the_invocation(sessions: SessionService) -> None:
    """After rewinding before e-2 the session keys equal those before e-2: changed keys
    restored, an added key removed, a None value kept; app:/user: keys keep their values."""
    between = await _two_invocations(sessions)
    result = await rewind_session(sessions, None, KEY, "e-2", event_id="rw-1")
    state = await sessions.get_state(KEY)
    assert _session_part(state) == _session_part(between)
    assert state["user:name"] == "Bob" and state["app:region"] == "us"
    assert result.appended and result.event_id == "rw-1"
    assert result.state_delta == {
        "city": "Oslo",
        "k2": REMOVED_STATE_VALUE,
        "tier": "gold",
        "nothing": None,
        "k1": 1,
    }
    last = (await sessions.get(KEY)).events[-1]
    assert last.id == "rw-1" and last.invocation_id == "rw-1" and last.author == "user"
    assert last.actions.rewind_before_invocation_id == "e-2"


async def test_rewind_before_the_first_invocation_restores_the_initial_state(
    sessions: SessionService,
) -> None:
    """Rewinding before e-1 gives back exactly the session keys create set (ADK #4933)."""
    await _two_invocations(sessions)
    await rewind_session(sessions, None, KEY, "e-1")
    state = await sessions.get_state(KEY)
    assert _session_part(state) == {"tier": "gold", "city": "Paris"}


async def test_rewind_to_before_a_rewind_undoes_it(sessions: SessionService) -> None:
    """A second rewind to before the first rewind event brings the rewound state back."""
    await _two_invocations(sessions)
    after = await sessions.get_state(KEY)
    first = await rewind_session(sessions, None, KEY, "e-2")
    await rewind_session(sessions, None, KEY, first.event_id)
    assert await sessions.get_state(KEY) == after


async def test_rewind_retried_with_its_event_id_writes_nothing_more(
    sessions: SessionService,
) -> None:
    """The same event id a second time returns the stored rewind (appended false), even
    while the session is busy; another kind of event's id is refused."""
    await _two_invocations(sessions)
    first = await rewind_session(sessions, None, KEY, "e-2", event_id="rw-1")
    again = await rewind_session(sessions, None, KEY, "e-2", event_id="rw-1", busy=True)
    assert not again.appended
    assert again.state_delta == first.state_delta
    assert [e.id for e in (await sessions.get(KEY)).events].count("rw-1") == 1
    with pytest.raises(InvalidSessionRequestError, match="e-1-a"):
        await rewind_session(sessions, None, KEY, "e-2", event_id="e-1-a")


async def test_rewind_refused_while_busy_or_for_an_unknown_invocation(
    sessions: SessionService,
) -> None:
    """A busy session and an unknown invocation are refused with typed errors, unchanged."""
    await _two_invocations(sessions)
    before = await sessions.get(KEY)
    with pytest.raises(SessionBusyError, match="adk/weather/u-1/s-1"):
        await rewind_session(sessions, None, KEY, "e-2", busy=True)
    with pytest.raises(InvocationNotFoundError, match="e-1, e-2"):
        await rewind_session(sessions, None, KEY, "e-9")
    with pytest.raises(SessionNotFoundError):
        await rewind_session(sessions, None, SessionKey(APP, USER, "s-none"), "e-1")
    assert await sessions.get(KEY) == before


# ---------------------------------------------------------------- rewind: artifacts


async def _artifact_invocations(sessions: SessionService, artifacts: ArtifactService) -> None:
    """e-1 saves report.txt v1; e-2 saves v2, new.bin v1 and the user's ledger."""
    await sessions.create(KEY, state=INITIAL)
    v1 = await _save(artifacts, "report.txt", types.Part(text="report one"))
    await sessions.append_events(KEY, [_event("e-1-a", "e-1", {"k": 1}, {"report.txt": v1})])
    v2 = await _save(artifacts, "report.txt", types.Part(text="report two"))
    blob = types.Part(inline_data=types.Blob(data=b"\x00\x01", mime_type="image/png"))
    new = await _save(artifacts, "new.bin", blob)
    ledger = await _save(artifacts, "user:ledger.json", types.Part(text="[1]"))
    delta = {"report.txt": v2, "new.bin": new, "user:ledger.json": ledger}
    await sessions.append_events(KEY, [_event("e-2-a", "e-2", {"k": 2}, delta)])


async def test_rewind_restores_initial_state_and_artifacts_on_every_backend_pair(
    sessions: SessionService, artifact_service: ArtifactService
) -> None:
    """Rewinding before e-2 restores state and saves report.txt's v1 content as v3 and an
    empty new.bin v2; nothing is deleted and the user's ledger is untouched (ADK #4932)."""
    await _artifact_invocations(sessions, artifact_service)
    result = await rewind_session(sessions, artifact_service, KEY, "e-2", event_id="rw-1")
    assert result.artifact_delta == {"report.txt": 3, "new.bin": 2}
    assert _session_part(await sessions.get_state(KEY)) == {"tier": "gold", "city": "Paris", "k": 1}
    assert (await _load(artifact_service, "report.txt")).text == "report one"
    assert await _versions(artifact_service, "report.txt") == [1, 2, 3]
    assert (await _load(artifact_service, "report.txt", 2)).text == "report two"
    absent = await _load(artifact_service, "new.bin")
    assert absent.inline_data is not None and absent.inline_data.data == b""
    assert absent.inline_data.mime_type == "application/octet-stream"
    assert await _versions(artifact_service, "new.bin") == [1, 2]
    assert await _versions(artifact_service, "user:ledger.json") == [1]
    assert await _metadata(artifact_service, "report.txt") == {
        REWIND_RESTORES_KEY: "1",
        REWIND_EVENT_KEY: "rw-1",
    }
    assert (await _metadata(artifact_service, "new.bin"))[REWIND_RESTORES_KEY] == "none"


class _FailingAppend(InMemorySessionService):
    """Fails the first append of a rewind event, as a crash after its artifact saves would."""

    def __init__(self) -> None:
        super().__init__()
        self.fail = True

    async def append_events(
        self, key: SessionKey, events: Sequence[Event], *, unstage: Sequence[str] = ()
    ) -> list[Event]:
        """Refuse once when the batch holds a rewind event."""
        if self.fail and any(e.actions.rewind_before_invocation_id for e in events):
            self.fail = False
            raise ConnectionError("the store went away")
        return await super().append_events(key, events, unstage=unstage)


async def test_rewind_retried_after_a_crash_saves_no_second_version(
    artifact_service: ArtifactService,
) -> None:
    """A rewind whose append failed, retried with its event id, finds the versions it saved."""
    sessions = _FailingAppend()
    await _artifact_invocations(sessions, artifact_service)
    with pytest.raises(ConnectionError):
        await rewind_session(sessions, artifact_service, KEY, "e-2", event_id="rw-1")
    result = await rewind_session(sessions, artifact_service, KEY, "e-2", event_id="rw-1")
    assert result.artifact_delta == {"report.txt": 3, "new.bin": 2}
    assert await _versions(artifact_service, "report.txt") == [1, 2, 3]
    assert await _versions(artifact_service, "new.bin") == [1, 2]


async def test_rewind_needs_an_artifact_service_only_when_artifacts_changed() -> None:
    """Without an artifact service a rewind over artifact changes is refused, writing
    nothing; one over state changes only needs none."""
    sessions, artifacts = InMemorySessionService(), InMemoryArtifactService()
    await _artifact_invocations(sessions, artifacts)
    with pytest.raises(ArtifactServiceNotConfiguredError, match=r"new\.bin, report\.txt"):
        await rewind_session(sessions, None, KEY, "e-2")
    assert len((await sessions.get(KEY)).events) == 2
    await sessions.append_events(KEY, [_event("e-3-a", "e-3", {"k": 3})])
    result = await rewind_session(sessions, None, KEY, "e-3")
    assert result.state_delta == {"k": 2} and result.artifact_delta == {}


# ---------------------------------------------------------------- fork


async def test_fork_copies_events_state_and_initial_state(sessions: SessionService) -> None:
    """A fork as of e-1 holds e-1's events, the state they produce from the initial state,
    and the same initial state; the original is untouched; the same id retries it."""
    between = await _two_invocations(sessions)
    original = await sessions.get(KEY)
    result = await fork_session(sessions, None, KEY, "e-1", new_session_id="s-fork")
    fork = SessionKey(APP, USER, "s-fork")
    assert result.session_id == "s-fork" and result.events == 2
    assert [e.id for e in (await sessions.get(fork)).events] == ["e-1-user", "e-1-a"]
    assert _session_part(await sessions.get_state(fork)) == _session_part(between)
    assert await sessions.get_initial_state(fork) == {"tier": "gold", "city": "Paris"}
    assert await sessions.get(KEY) == original
    again = await fork_session(sessions, None, KEY, "e-1", new_session_id="s-fork")
    assert again.events == 2 and len((await sessions.get(fork)).events) == 2


async def test_fork_never_writes_the_shared_scopes_back(sessions: SessionService) -> None:
    """Copied events lose their app:/user: deltas: the fork leaves shared state as it is."""
    await _two_invocations(sessions)
    await sessions.append_events(KEY, [_event("e-3-a", "e-3", {"user:name": "Cy"})])
    await fork_session(sessions, None, KEY, "e-2", new_session_id="s-fork")
    state = await sessions.get_state(SessionKey(APP, USER, "s-fork"))
    assert state["user:name"] == "Cy" and state["app:region"] == "us"
    copied = (await sessions.get(SessionKey(APP, USER, "s-fork"))).events
    assert all(not k.startswith(("app:", "user:")) for e in copied for k in e.actions.state_delta)


async def test_fork_refusals(sessions: SessionService) -> None:
    """A fork into a taken session, into itself, at an unknown invocation, or of the running
    (latest) invocation while busy is refused; one of an earlier invocation is not."""
    await _two_invocations(sessions)
    await sessions.create(SessionKey(APP, USER, "s-taken"))
    await sessions.append_events(SessionKey(APP, USER, "s-taken"), [_event("x", "x")])
    with pytest.raises(SessionExistsError, match="s-taken"):
        await fork_session(sessions, None, KEY, "e-1", new_session_id="s-taken")
    with pytest.raises(InvalidSessionRequestError, match="itself"):
        await fork_session(sessions, None, KEY, "e-1", new_session_id="s-1")
    with pytest.raises(InvocationNotFoundError):
        await fork_session(sessions, None, KEY, "e-9")
    for point in ("e-2", None):
        with pytest.raises(SessionBusyError):
            await fork_session(sessions, None, KEY, point, busy=True)
    forked = await fork_session(sessions, None, KEY, "e-1", busy=True)
    assert forked.session_id.startswith("s-") and forked.events == 2


async def test_fork_copies_artifact_versions_as_of_the_point(
    sessions: SessionService, artifact_service: ArtifactService
) -> None:
    """A fork as of e-1 has report.txt v1 only; as of e-2 v1, v2 and new.bin v1, same
    numbers and content; user: artifacts are shared, not copied; the original keeps its own."""
    await _artifact_invocations(sessions, artifact_service)
    one = await fork_session(sessions, artifact_service, KEY, "e-1", new_session_id="s-one")
    assert one.artifacts == {"report.txt": [1]}
    at_one = SessionKey(APP, USER, "s-one")
    assert await _versions(artifact_service, "report.txt", at_one) == [1]
    assert (await _load(artifact_service, "report.txt", key=at_one)).text == "report one"
    two = await fork_session(sessions, artifact_service, KEY, "e-2", new_session_id="s-two")
    assert two.artifacts == {"report.txt": [1, 2], "new.bin": [1]}
    at_two = SessionKey(APP, USER, "s-two")
    blob = (await _load(artifact_service, "new.bin", key=at_two)).inline_data
    assert blob is not None and blob.data == b"\x00\x01" and blob.mime_type == "image/png"
    assert (await _load(artifact_service, "user:ledger.json", key=at_two)).text == "[1]"
    retried = await fork_session(sessions, artifact_service, KEY, "e-2", new_session_id="s-two")
    assert retried.artifacts == two.artifacts
    assert await _versions(artifact_service, "report.txt", at_two) == [1, 2]
    assert await _versions(artifact_service, "report.txt") == [1, 2]
