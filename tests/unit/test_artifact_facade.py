"""ctx.artifacts: identity filled in, artifact_delta tracking, idempotency keys (SPEC §1.3)."""

from __future__ import annotations

import asyncio

import pytest
from google.genai import types

from adk_temporal.artifacts import (
    ArtifactNotFoundError,
    ArtifactsFacade,
    DeleteRequest,
    InMemoryArtifactService,
    InvalidArtifactRequestError,
    LoadRequest,
    SaveRequest,
    SaveResponse,
    VersionConflictError,
)
from adk_temporal.events import EventActions
from adk_temporal.ids import SessionKey


def facade(
    service: object,
    actions: EventActions | None = None,
    idempotency_key: str | None = None,
    session_id: str = "s-1",
) -> ArtifactsFacade:
    """A facade for weather/u-1 with the given tracking and key."""
    return ArtifactsFacade(
        service,  # type: ignore[arg-type]
        SessionKey("weather", "u-1", session_id),
        actions=actions,
        idempotency_key=idempotency_key,
    )


def text(value: str) -> types.Part:
    """A text part."""
    return types.Part(text=value)


class GatedService(InMemoryArtifactService):
    """Saves wait for their gate; the test decides the order in which they complete."""

    def __init__(self) -> None:
        super().__init__()
        self.gates: list[asyncio.Event] = []
        self.started = asyncio.Condition()

    async def save(self, request: SaveRequest) -> SaveResponse:
        response = await super().save(request)
        gate = asyncio.Event()
        async with self.started:
            self.gates.append(gate)
            self.started.notify_all()
        await gate.wait()
        return response


class RecordingService(InMemoryArtifactService):
    """Records every save request it receives."""

    def __init__(self) -> None:
        super().__init__()
        self.saves: list[SaveRequest] = []

    async def save(self, request: SaveRequest) -> SaveResponse:
        self.saves.append(request)
        return await super().save(request)


class FailingSaves(InMemoryArtifactService):
    """Every save loses the version race."""

    async def save(self, request: SaveRequest) -> SaveResponse:
        raise VersionConflictError("lost the race on every attempt")


async def test_save_records_the_version_in_the_delta() -> None:
    """A tracked save returns the version and sets artifact_delta[name] to it."""
    actions = EventActions()
    artifacts = facade(InMemoryArtifactService(), actions)
    assert await artifacts.save("report.txt", text("v1")) == 1
    assert actions.artifact_delta == {"report.txt": 1}


async def test_two_saves_keep_the_higher_version() -> None:
    """Saving a name twice in one context leaves the higher version in the delta."""
    actions = EventActions()
    artifacts = facade(InMemoryArtifactService(), actions)
    await artifacts.save("report.txt", text("v1"))
    await artifacts.save("report.txt", text("v2"))
    await artifacts.save("other.txt", text("x"))
    assert actions.artifact_delta == {"report.txt": 2, "other.txt": 1}


async def test_out_of_order_completion_keeps_the_higher_version() -> None:
    """When the save that got version 2 finishes before the one that got 1, 2 stays."""
    service = GatedService()
    actions = EventActions()
    artifacts = facade(service, actions)
    first = asyncio.create_task(artifacts.save("report.txt", text("a")))
    second = asyncio.create_task(artifacts.save("report.txt", text("b")))
    async with service.started:
        await service.started.wait_for(lambda: len(service.gates) == 2)
    service.gates[1].set()
    assert await second == 2
    assert actions.artifact_delta == {"report.txt": 2}
    service.gates[0].set()
    assert await first == 1
    assert actions.artifact_delta == {"report.txt": 2}


async def test_failed_save_raises_and_leaves_the_delta_unchanged() -> None:
    """A save the service refuses or fails propagates its error and records nothing."""
    actions = EventActions(artifact_delta={"report.txt": 3})
    with pytest.raises(VersionConflictError, match="lost the race on every attempt"):
        await facade(FailingSaves(), actions).save("report.txt", text("x"))
    with pytest.raises(
        InvalidArtifactRequestError,
        match=r"^invalid save request: part.inline_data or part.text has to be set$",
    ):
        await facade(InMemoryArtifactService(), actions).save("new.txt", types.Part())
    assert actions.artifact_delta == {"report.txt": 3}


async def test_reads_never_touch_the_delta() -> None:
    """load, list, versions, get_version and list_artifact_versions leave the delta as it was."""
    service = InMemoryArtifactService()
    await facade(service).save("report.txt", text("v1"))
    actions = EventActions()
    artifacts = facade(service, actions)
    assert (await artifacts.load("report.txt")).text == "v1"
    assert (await artifacts.load("report.txt", 1)).text == "v1"
    assert await artifacts.list() == ["report.txt"]
    assert await artifacts.versions("report.txt") == [1]
    assert (await artifacts.get_version("report.txt")).version == 1
    assert [v.version for v in await artifacts.list_artifact_versions("report.txt")] == [1]
    assert actions.artifact_delta == {}


async def test_user_prefix_is_kept_in_the_delta_key() -> None:
    """A user: name is recorded under its full name, prefix included."""
    actions = EventActions()
    await facade(InMemoryArtifactService(), actions).save("user:profile.json", text("{}"))
    assert actions.artifact_delta == {"user:profile.json": 1}


async def test_untracked_facade_saves_without_actions() -> None:
    """With actions=None saves still work and return their versions."""
    artifacts = facade(InMemoryArtifactService(), None)
    assert await artifacts.save("report.txt", text("v1")) == 1
    assert await artifacts.save("report.txt", text("v2")) == 2


async def test_identity_is_filled_in_from_the_session() -> None:
    """The facade addresses its own app, user and session; user: names are shared."""
    service = InMemoryArtifactService()
    await facade(service, session_id="s-1").save("report.txt", text("mine"))
    await facade(service, session_id="s-1").save("user:profile.json", text("shared"))
    other_session = facade(service, session_id="s-2")
    assert await other_session.list() == ["user:profile.json"]
    loaded = await service.load(
        LoadRequest(app_name="weather", user_id="u-1", session_id="s-1", file_name="report.txt")
    )
    assert loaded.part.text == "mine"


async def test_get_version_of_a_missing_version_raises_not_found() -> None:
    """get_version and load of a missing version raise ArtifactNotFoundError."""
    artifacts = facade(InMemoryArtifactService())
    await artifacts.save("report.txt", text("v1"))
    with pytest.raises(ArtifactNotFoundError, match=r"^artifact 'report\.txt' version 2 not"):
        await artifacts.get_version("report.txt", 2)
    with pytest.raises(ArtifactNotFoundError, match=r"^artifact 'missing' not found"):
        await artifacts.load("missing")


async def test_list_artifact_versions_describes_the_sessions_versions_oldest_first() -> None:
    """list_artifact_versions gives each version's metadata in this session, ascending."""
    service = InMemoryArtifactService()
    mine = facade(service, session_id="s-1")
    await mine.save("report.txt", text("v1"), custom_metadata={"draft": "yes"})
    await mine.save(
        "report.txt", types.Part(inline_data=types.Blob(data=b"%PDF", mime_type="application/pdf"))
    )
    await facade(service, session_id="s-2").save("report.txt", text("elsewhere"))
    listed = await mine.list_artifact_versions("report.txt")
    assert [(v.version, v.mime_type, v.custom_metadata) for v in listed] == [
        (1, "text/plain", {"draft": "yes"}),
        (2, "application/pdf", {}),
    ]
    assert listed == [await mine.get_version("report.txt", v) for v in (1, 2)]


async def test_list_artifact_versions_of_a_missing_name_raises_not_found() -> None:
    """Like versions(), a name with no versions raises ArtifactNotFoundError naming it."""
    artifacts = facade(InMemoryArtifactService())
    with pytest.raises(ArtifactNotFoundError, match=r"^artifact 'missing' not found"):
        await artifacts.list_artifact_versions("missing")
    with pytest.raises(InvalidArtifactRequestError, match=r"cannot contain path separators"):
        await artifacts.list_artifact_versions("a/b")


async def test_idempotency_keys_are_derived_per_name_and_ordinal() -> None:
    """Each save's key is "{facade key}/{name}/{n}", n counting that name's saves."""
    service = RecordingService()
    artifacts = facade(service, EventActions(), idempotency_key="wf/e-1/call-1")
    await artifacts.save("a.txt", text("1"))
    await artifacts.save("b.txt", text("1"))
    await artifacts.save("a.txt", text("2"))
    assert [r.idempotency_key for r in service.saves] == [
        "wf/e-1/call-1/a.txt/1",
        "wf/e-1/call-1/b.txt/1",
        "wf/e-1/call-1/a.txt/2",
    ]


async def test_retried_facade_with_the_same_key_returns_the_same_versions() -> None:
    """Re-running a tool's saves with the same key (an activity retry) creates nothing new."""
    service = InMemoryArtifactService()
    first_actions, retry_actions = EventActions(), EventActions()
    first = facade(service, first_actions, idempotency_key="wf/e-1/call-1")
    first_versions = [await first.save("report.txt", text(f"draft {n}")) for n in (1, 2)]
    retry = facade(service, retry_actions, idempotency_key="wf/e-1/call-1")
    retry_versions = [await retry.save("report.txt", text(f"draft {n}")) for n in (1, 2)]
    assert first_versions == retry_versions == [1, 2]
    assert retry_actions.artifact_delta == first_actions.artifact_delta == {"report.txt": 2}
    assert await first.versions("report.txt") == [1, 2]


async def test_different_keys_or_no_key_create_new_versions() -> None:
    """Another invocation's key, or no key at all, always creates a new version."""
    service = RecordingService()
    await facade(service, idempotency_key="call-1").save("report.txt", text("x"))
    assert await facade(service, idempotency_key="call-2").save("report.txt", text("x")) == 2
    assert await facade(service).save("report.txt", text("x")) == 3
    assert await facade(service).save("report.txt", text("x")) == 4
    assert service.saves[-1].idempotency_key is None


async def test_service_property_exposes_the_full_contract() -> None:
    """facade.service gives the whole service contract, for deletes and other direct calls."""
    service = InMemoryArtifactService()
    artifacts = facade(service)
    await artifacts.save("report.txt", text("x"))
    await artifacts.service.delete(
        DeleteRequest(app_name="weather", user_id="u-1", session_id="s-1", file_name="report.txt")
    )
    assert await artifacts.list() == []
