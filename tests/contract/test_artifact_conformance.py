"""One artifact contract suite, run against the in-memory, file and GCS backends (SPEC §2)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from google.genai import types

from adk_temporal.artifacts import (
    ArtifactNotFoundError,
    ArtifactRequest,
    ArtifactService,
    ArtifactVersion,
    DeleteRequest,
    GetArtifactVersionRequest,
    InvalidArtifactRequestError,
    ListArtifactVersionsRequest,
    ListRequest,
    LoadRequest,
    SaveRequest,
    VersionConflictError,
    VersionsRequest,
)

APP = "weather"
USER = "u-1"
SESSION = "s-1"
IDENTITY: dict[str, Any] = {"app_name": APP, "user_id": USER, "session_id": SESSION}


def text(value: str) -> types.Part:
    """A text part."""
    return types.Part(text=value)


def inline(data: bytes, mime_type: str = "application/octet-stream") -> types.Part:
    """An inline-data part."""
    return types.Part(inline_data=types.Blob(data=data, mime_type=mime_type))


def content(part: types.Part) -> tuple[bytes, str]:
    """A part's bytes and mime type, however the backend chose to represent it."""
    if part.inline_data is not None:
        return part.inline_data.data or b"", part.inline_data.mime_type or ""
    return (part.text or "").encode(), "text/plain"


async def save(
    service: ArtifactService,
    file_name: str,
    part: types.Part,
    *,
    session_id: str = SESSION,
    user_id: str = USER,
    app_name: str = APP,
    **fields: object,
) -> int:
    """Save through the service and return the version."""
    request = SaveRequest.model_validate(
        {
            "app_name": app_name,
            "user_id": user_id,
            "session_id": session_id,
            "file_name": file_name,
            "part": part,
            **fields,
        }
    )
    return (await service.save(request)).version


async def load(
    service: ArtifactService,
    file_name: str,
    version: int = 0,
    *,
    session_id: str = SESSION,
    user_id: str = USER,
    app_name: str = APP,
) -> types.Part:
    """Load through the service."""
    request = LoadRequest(
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        file_name=file_name,
        version=version,
    )
    return (await service.load(request)).part


async def versions(service: ArtifactService, file_name: str) -> list[int]:
    """The versions of a name in the default session."""
    return (await service.versions(VersionsRequest(**IDENTITY, file_name=file_name))).versions


async def names(service: ArtifactService, session_id: str = SESSION) -> list[str]:
    """The names visible to a session of the default user."""
    request = ListRequest(app_name=APP, user_id=USER, session_id=session_id)
    return (await service.list(request)).file_names


async def describe(service: ArtifactService, file_name: str, version: int = 0) -> ArtifactVersion:
    """Get a version's metadata in the default session."""
    request = GetArtifactVersionRequest(**IDENTITY, file_name=file_name, version=version)
    return (await service.get_artifact_version(request)).artifact_version


async def describe_all(service: ArtifactService, file_name: str) -> list[ArtifactVersion]:
    """Every version's metadata in the default session, as list_artifact_versions gives it."""
    request = ListArtifactVersionsRequest(**IDENTITY, file_name=file_name)
    return (await service.list_artifact_versions(request)).artifact_versions


async def delete(service: ArtifactService, file_name: str, version: int = 0) -> None:
    """Delete in the default session."""
    await service.delete(DeleteRequest(**IDENTITY, file_name=file_name, version=version))


def not_found(file_name: str, version: int = 0, session_id: str = SESSION) -> str:
    """The not-found message for the default identity, as a regex."""
    what = f"artifact '{file_name}'" + (f" version {version}" if version else "")
    return f"^{what} not found \\(app_name='{APP}', user_id='{USER}', session_id='{session_id}'\\)$"


@pytest.fixture
async def three_files(artifact_service: ArtifactService) -> ArtifactService:
    """The Go suite's store: file1 at versions 1-3, file2 and file3 at version 1."""
    for n in (1, 2, 3):
        await save(artifact_service, "file1", text(f"file1 v{n}"))
    await save(artifact_service, "file2", inline(b"file2 bytes", "image/png"))
    await save(artifact_service, "file3", text("file3 v1"))
    return artifact_service


# --- versions and loading (Go suite) ---------------------------------------------------------


async def test_saves_number_versions_per_name_from_one(artifact_service: ArtifactService) -> None:
    """Each save creates latest + 1, counted separately per name."""
    got = [await save(artifact_service, "file1", text(f"v{n}")) for n in (1, 2, 3)]
    got.append(await save(artifact_service, "file2", text("x")))
    assert got == [1, 2, 3, 1]


async def test_load_latest_returns_the_last_save(three_files: ArtifactService) -> None:
    """version=0 loads the latest version."""
    assert content(await load(three_files, "file1")) == (b"file1 v3", "text/plain")


async def test_load_specific_version(three_files: ArtifactService) -> None:
    """A positive version loads exactly that version."""
    assert content(await load(three_files, "file1", 2)) == (b"file1 v2", "text/plain")
    assert content(await load(three_files, "file1", 1)) == (b"file1 v1", "text/plain")


async def test_inline_data_round_trips_with_its_mime_type(three_files: ArtifactService) -> None:
    """Inline data loads back with the same bytes and mime type."""
    assert content(await load(three_files, "file2")) == (b"file2 bytes", "image/png")


async def test_load_returns_text_as_text_on_every_backend(
    reopen_artifact_service: Callable[[], ArtifactService],
) -> None:
    """A part saved as text loads as that text part on every backend, also after a restart."""
    await save(reopen_artifact_service(), "notes.txt", text("héllo"))
    assert await load(reopen_artifact_service(), "notes.txt") == text("héllo")


async def test_inline_text_plain_data_loads_as_inline_data_not_text(
    artifact_service: ArtifactService,
) -> None:
    """Inline data of type text/plain stays inline data: only part.text loads as text."""
    await save(artifact_service, "notes.bin", inline("héllo".encode(), "text/plain"))
    assert await load(artifact_service, "notes.bin") == inline("héllo".encode(), "text/plain")


async def test_inline_data_display_name_round_trips(
    reopen_artifact_service: Callable[[], ArtifactService],
) -> None:
    """inline_data.display_name survives save and load (and a restart); None stays None."""
    named = types.Part(
        inline_data=types.Blob(
            data=b"%PDF", mime_type="application/pdf", display_name="Q3 報告.pdf"
        )
    )
    await save(reopen_artifact_service(), "report", named)
    await save(reopen_artifact_service(), "report", inline(b"%PDF", "application/pdf"))
    reopened = reopen_artifact_service()
    assert await load(reopened, "report", 1) == named
    unnamed = await load(reopened, "report", 2)
    assert unnamed.inline_data is not None and unnamed.inline_data.display_name is None


async def test_list_returns_every_saved_name(three_files: ArtifactService) -> None:
    """list names each saved file once."""
    assert await names(three_files) == ["file1", "file2", "file3"]


async def test_versions_are_ascending(three_files: ArtifactService) -> None:
    """versions returns every version in ascending order."""
    assert await versions(three_files, "file1") == [1, 2, 3]
    assert await versions(three_files, "file2") == [1]


async def test_delete_latest_version_makes_previous_the_latest(
    three_files: ArtifactService,
) -> None:
    """After deleting version 3, the latest is version 2 and version 3 is not found."""
    await delete(three_files, "file1", 3)
    assert content(await load(three_files, "file1")) == (b"file1 v2", "text/plain")
    assert await versions(three_files, "file1") == [1, 2]
    with pytest.raises(ArtifactNotFoundError, match=not_found("file1", 3)):
        await load(three_files, "file1", 3)


async def test_delete_middle_version_keeps_the_others(three_files: ArtifactService) -> None:
    """Deleting one version removes only that version."""
    await delete(three_files, "file1", 2)
    assert await versions(three_files, "file1") == [1, 3]
    assert content(await load(three_files, "file1", 1)) == (b"file1 v1", "text/plain")


async def test_delete_all_versions_makes_the_name_not_found(three_files: ArtifactService) -> None:
    """version=0 deletes every version: the name is gone from load, versions and list."""
    await delete(three_files, "file1")
    with pytest.raises(ArtifactNotFoundError, match=not_found("file1")):
        await load(three_files, "file1")
    with pytest.raises(ArtifactNotFoundError, match=not_found("file1")):
        await versions(three_files, "file1")
    with pytest.raises(ArtifactNotFoundError, match=not_found("file1")):
        await describe(three_files, "file1")
    assert await names(three_files) == ["file2", "file3"]


async def test_deleted_latest_number_is_reused(artifact_service: ArtifactService) -> None:
    """Deleting the latest version makes its number the next one; after deleting all, 1."""
    for n in (1, 2, 3):
        await save(artifact_service, "f", text(f"v{n}"))
    await delete(artifact_service, "f", 3)
    assert await save(artifact_service, "f", text("again")) == 3
    assert content(await load(artifact_service, "f", 3)) == (b"again", "text/plain")
    await delete(artifact_service, "f")
    assert await save(artifact_service, "f", text("fresh")) == 1


# --- empty store -----------------------------------------------------------------------------


async def test_empty_store_load_is_not_found(artifact_service: ArtifactService) -> None:
    """Loading from an empty store raises ArtifactNotFoundError (a FileNotFoundError)."""
    with pytest.raises(ArtifactNotFoundError, match=not_found("missing.txt")) as info:
        await load(artifact_service, "missing.txt")
    assert isinstance(info.value, FileNotFoundError)


async def test_empty_store_load_of_a_version_is_not_found(
    artifact_service: ArtifactService,
) -> None:
    """Loading a specific version of a missing name raises ArtifactNotFoundError naming it."""
    with pytest.raises(ArtifactNotFoundError, match=not_found("missing.txt", 2)):
        await load(artifact_service, "missing.txt", 2)


async def test_empty_store_list_is_empty(artifact_service: ArtifactService) -> None:
    """list on an empty store returns [] rather than raising."""
    assert await names(artifact_service) == []


async def test_empty_store_versions_is_not_found(artifact_service: ArtifactService) -> None:
    """versions of a missing name raises ArtifactNotFoundError."""
    with pytest.raises(ArtifactNotFoundError, match=not_found("missing.txt")):
        await versions(artifact_service, "missing.txt")


async def test_empty_store_get_artifact_version_is_not_found(
    artifact_service: ArtifactService,
) -> None:
    """get_artifact_version of a missing name raises ArtifactNotFoundError."""
    with pytest.raises(ArtifactNotFoundError, match=not_found("missing.txt")):
        await describe(artifact_service, "missing.txt")


async def test_deleting_anything_absent_is_not_an_error(artifact_service: ArtifactService) -> None:
    """Deleting a missing name, or a missing version of an existing name, succeeds quietly."""
    await delete(artifact_service, "missing.txt")
    await delete(artifact_service, "missing.txt", 4)
    await save(artifact_service, "present.txt", text("x"))
    await delete(artifact_service, "present.txt", 9)
    assert await versions(artifact_service, "present.txt") == [1]


# --- get_artifact_version --------------------------------------------------------------------


async def test_get_artifact_version_latest(three_files: ArtifactService) -> None:
    """version=0 describes the latest version."""
    described = await describe(three_files, "file1")
    assert (described.version, described.mime_type) == (3, "text/plain")


async def test_get_artifact_version_specific(three_files: ArtifactService) -> None:
    """A positive version describes exactly that version, with its mime type."""
    assert (await describe(three_files, "file1", 1)).version == 1
    assert (await describe(three_files, "file2", 1)).mime_type == "image/png"


async def test_get_artifact_version_missing_version(three_files: ArtifactService) -> None:
    """A version that does not exist raises ArtifactNotFoundError naming it."""
    with pytest.raises(ArtifactNotFoundError, match=not_found("file1", 7)):
        await describe(three_files, "file1", 7)


async def test_create_time_is_utc_and_current(artifact_service: ArtifactService) -> None:
    """create_time is a timezone-aware UTC datetime close to the time of the save."""
    before = datetime.now(UTC)
    await save(artifact_service, "f", text("x"))
    created = (await describe(artifact_service, "f")).create_time
    assert created.utcoffset() == timedelta(0)
    assert before - timedelta(seconds=5) <= created <= datetime.now(UTC) + timedelta(seconds=5)


async def test_canonical_uri_names_the_version(
    artifact_service: ArtifactService, canonical_uri_scheme: str
) -> None:
    """canonical_uri is empty in memory, else a URI of the backend's scheme naming the version."""
    await save(artifact_service, "report.txt", text("x"))
    await save(artifact_service, "report.txt", text("y"))
    uri = (await describe(artifact_service, "report.txt")).canonical_uri
    if not canonical_uri_scheme:
        assert uri == ""
    else:
        assert uri.startswith(f"{canonical_uri_scheme}://")
        assert f"/{APP}/{USER}/{SESSION}/report.txt/2" in uri


# --- metadata and content --------------------------------------------------------------------


async def test_mime_types_text_plain_and_inline(artifact_service: ArtifactService) -> None:
    """Text is recorded as text/plain, inline data with its own mime type."""
    await save(artifact_service, "a.txt", text("hello"))
    await save(artifact_service, "b.pdf", inline(b"%PDF-1.7", "application/pdf"))
    assert (await describe(artifact_service, "a.txt")).mime_type == "text/plain"
    assert (await describe(artifact_service, "b.pdf")).mime_type == "application/pdf"


async def test_custom_metadata_round_trips(artifact_service: ArtifactService) -> None:
    """custom_metadata given on save comes back from get_artifact_version; none gives {}."""
    await save(
        artifact_service, "f", text("x"), custom_metadata={"source": "tool", "lang": "zh-CN"}
    )
    await save(artifact_service, "f", text("y"))
    assert (await describe(artifact_service, "f", 1)).custom_metadata == {
        "source": "tool",
        "lang": "zh-CN",
    }
    assert (await describe(artifact_service, "f", 2)).custom_metadata == {}


async def test_zero_byte_inline_data_saved_twice_gets_two_versions(
    artifact_service: ArtifactService,
) -> None:
    """Zero-length inline data is valid content and never overwrites: versions 1 and 2."""
    assert await save(artifact_service, "empty.bin", inline(b"")) == 1
    assert await save(artifact_service, "empty.bin", inline(b"")) == 2
    assert await versions(artifact_service, "empty.bin") == [1, 2]
    assert content(await load(artifact_service, "empty.bin", 2)) == (
        b"",
        "application/octet-stream",
    )


async def test_load_returns_a_copy(artifact_service: ArtifactService) -> None:
    """Mutating a saved or loaded part does not change what the store returns."""
    original = inline(b"abc", "application/octet-stream")
    await save(artifact_service, "f", original)
    assert original.inline_data is not None
    original.inline_data.data = b"changed after save"
    loaded = await load(artifact_service, "f")
    assert loaded.inline_data is not None
    loaded.inline_data.data = b"changed after load"
    loaded.inline_data.mime_type = "text/html"
    assert content(await load(artifact_service, "f")) == (b"abc", "application/octet-stream")


async def test_reopened_service_sees_saved_versions(
    reopen_artifact_service: Callable[[], ArtifactService],
) -> None:
    """A new service over the same storage (a restarted process) sees every version."""
    first = reopen_artifact_service()
    await save(first, "f", text("one"))
    await save(first, "f", text("two"), custom_metadata={"k": "v"})
    second = reopen_artifact_service()
    assert await versions(second, "f") == [1, 2]
    assert content(await load(second, "f")) == (b"two", "text/plain")
    assert (await describe(second, "f")).custom_metadata == {"k": "v"}
    assert await save(second, "f", text("three")) == 3


# --- list_artifact_versions ------------------------------------------------------------------


async def test_list_artifact_versions_describes_every_version_oldest_first(
    artifact_service: ArtifactService,
) -> None:
    """Each version's ArtifactVersion, ascending, equal to what get_artifact_version says."""
    await save(artifact_service, "f", text("one"), custom_metadata={"n": "1"})
    await save(artifact_service, "f", inline(b"\x89PNG", "image/png"))
    await save(artifact_service, "f", text("three"), idempotency_key="k")
    await delete(artifact_service, "f", 2)
    await save(artifact_service, "f", text("five"), version=5)
    listed = await describe_all(artifact_service, "f")
    assert [v.version for v in listed] == [1, 3, 5]
    assert listed == [await describe(artifact_service, "f", v) for v in (1, 3, 5)]
    assert [v.custom_metadata for v in listed] == [{"n": "1"}, {}, {}]


async def test_list_artifact_versions_follows_scope_and_mime_types(
    artifact_service: ArtifactService,
) -> None:
    """A user: name lists from any session of the user; mime types are the saved ones."""
    await save(artifact_service, "user:chart", inline(b"\x89PNG", "image/png"), session_id="s-9")
    await save(artifact_service, "user:chart", text("caption"), session_id="s-8")
    listed = await describe_all(artifact_service, "user:chart")
    assert [(v.version, v.mime_type) for v in listed] == [(1, "image/png"), (2, "text/plain")]


async def test_list_artifact_versions_of_a_missing_name_is_not_found(
    artifact_service: ArtifactService,
) -> None:
    """Like versions: no versions (never saved, or all deleted) raises ArtifactNotFoundError."""
    with pytest.raises(ArtifactNotFoundError, match=not_found("missing.txt")):
        await describe_all(artifact_service, "missing.txt")
    await save(artifact_service, "gone.txt", text("x"))
    await delete(artifact_service, "gone.txt")
    with pytest.raises(ArtifactNotFoundError, match=not_found("gone.txt")):
        await describe_all(artifact_service, "gone.txt")


# --- scope and listing -----------------------------------------------------------------------


async def test_user_scoped_name_is_shared_across_sessions(
    artifact_service: ArtifactService,
) -> None:
    """A user: name saved from s-1 loads, lists and gets new versions from s-2."""
    await save(artifact_service, "user:profile.json", text("v1"), session_id="s-1")
    assert content(await load(artifact_service, "user:profile.json", session_id="s-2")) == (
        b"v1",
        "text/plain",
    )
    assert await names(artifact_service, "s-2") == ["user:profile.json"]
    assert await save(artifact_service, "user:profile.json", text("v2"), session_id="s-2") == 2


async def test_user_scoped_name_is_invisible_to_other_users_and_apps(
    artifact_service: ArtifactService,
) -> None:
    """Another user or another app of the same user never sees a user: name."""
    await save(artifact_service, "user:profile.json", text("v1"))
    with pytest.raises(ArtifactNotFoundError):
        await load(artifact_service, "user:profile.json", user_id="u-2")
    with pytest.raises(ArtifactNotFoundError):
        await load(artifact_service, "user:profile.json", app_name="other-app")
    other_user = ListRequest(app_name=APP, user_id="u-2", session_id=SESSION)
    assert (await artifact_service.list(other_user)).file_names == []


async def test_session_scoped_name_is_invisible_to_other_sessions(
    artifact_service: ArtifactService,
) -> None:
    """A plain name belongs to its session: another session neither loads nor lists it."""
    await save(artifact_service, "report.txt", text("x"), session_id="s-1")
    with pytest.raises(ArtifactNotFoundError, match=not_found("report.txt", session_id="s-2")):
        await load(artifact_service, "report.txt", session_id="s-2")
    assert await names(artifact_service, "s-2") == []
    assert await save(artifact_service, "report.txt", text("y"), session_id="s-2") == 1


async def test_list_is_the_sorted_deduplicated_union_of_both_scopes(
    artifact_service: ArtifactService,
) -> None:
    """list merges session and user names, once each, in byte order."""
    for name in ("b.txt", "b.txt", "a.txt", "Zeta.txt", "user:z.json"):
        await save(artifact_service, name, text("x"), session_id="s-1")
    await save(artifact_service, "user:c.json", text("x"), session_id="s-2")
    await save(artifact_service, "elsewhere.txt", text("x"), session_id="s-2")
    assert await names(artifact_service, "s-1") == [
        "Zeta.txt",
        "a.txt",
        "b.txt",
        "user:c.json",
        "user:z.json",
    ]


# --- explicit versions and idempotency -------------------------------------------------------


async def test_explicit_version_is_saved_exactly(artifact_service: ArtifactService) -> None:
    """SaveRequest.version > 0 creates that version; the next automatic save follows it."""
    assert await save(artifact_service, "f", text("five"), version=5) == 5
    assert await versions(artifact_service, "f") == [5]
    assert await save(artifact_service, "f", text("six")) == 6
    assert await save(artifact_service, "f", text("two"), version=2) == 2
    assert await versions(artifact_service, "f") == [2, 5, 6]
    assert content(await load(artifact_service, "f", 2)) == (b"two", "text/plain")


async def test_explicit_existing_version_conflicts(artifact_service: ArtifactService) -> None:
    """Saving an existing version raises VersionConflictError and keeps the stored content."""
    await save(artifact_service, "f", text("original"))
    with pytest.raises(
        VersionConflictError,
        match=r"^artifact 'f' version 1 already exists; save with version=0 to create the "
        r"next version$",
    ):
        await save(artifact_service, "f", text("overwrite?"), version=1)
    assert content(await load(artifact_service, "f", 1)) == (b"original", "text/plain")


async def test_version_zero_or_none_means_next(artifact_service: ArtifactService) -> None:
    """SaveRequest.version None and 0 both create the next version."""
    assert await save(artifact_service, "f", text("a"), version=None) == 1
    assert await save(artifact_service, "f", text("b"), version=0) == 2


async def test_idempotent_save_returns_the_existing_version(
    artifact_service: ArtifactService,
) -> None:
    """A save whose key matches an existing version returns it and writes nothing."""
    assert await save(artifact_service, "f", text("first"), idempotency_key="k-1") == 1
    assert await save(artifact_service, "f", text("other"), idempotency_key="k-2") == 2
    assert await save(artifact_service, "f", text("first again"), idempotency_key="k-1") == 1
    assert await versions(artifact_service, "f") == [1, 2]
    assert content(await load(artifact_service, "f", 1)) == (b"first", "text/plain")


async def test_idempotency_key_is_per_name(artifact_service: ArtifactService) -> None:
    """The same key on another name creates that name's own version."""
    await save(artifact_service, "a", text("x"), idempotency_key="k")
    await save(artifact_service, "b", text("x"))
    assert await save(artifact_service, "b", text("y"), idempotency_key="k") == 2


async def test_idempotency_key_never_appears_in_custom_metadata(
    artifact_service: ArtifactService,
) -> None:
    """The stored idempotency key is not part of the version's custom metadata."""
    await save(artifact_service, "f", text("x"), idempotency_key="k", custom_metadata={"a": "b"})
    assert (await describe(artifact_service, "f")).custom_metadata == {"a": "b"}


async def test_idempotent_retry_with_explicit_version(artifact_service: ArtifactService) -> None:
    """Retrying an explicit-version save with its key returns the version, not a conflict."""
    assert await save(artifact_service, "f", text("x"), version=3, idempotency_key="k") == 3
    assert await save(artifact_service, "f", text("x"), version=3, idempotency_key="k") == 3


# --- concurrency -----------------------------------------------------------------------------


async def test_concurrent_saves_get_distinct_consecutive_versions(
    artifact_service: ArtifactService,
) -> None:
    """16 concurrent saves of one name get exactly versions 1..16, each with its own content."""
    got = await asyncio.gather(
        *(save(artifact_service, "race.txt", text(f"writer {i}")) for i in range(16))
    )
    assert sorted(got) == list(range(1, 17))
    assert await versions(artifact_service, "race.txt") == list(range(1, 17))
    for writer, version in enumerate(got):
        loaded = await load(artifact_service, "race.txt", version)
        assert content(loaded) == (f"writer {writer}".encode(), "text/plain")


# --- validation (SPEC §2.2) ------------------------------------------------------------------

_OK_PART = text("x")

VALIDATION_CASES: list[tuple[ArtifactRequest, str]] = [
    (SaveRequest(), "invalid save request: missing required fields: "
     "app_name, user_id, session_id, file_name, part"),
    (SaveRequest(app_name=APP, file_name="f", part=_OK_PART),
     "invalid save request: missing required fields: user_id, session_id"),
    (SaveRequest(**IDENTITY, file_name="f"),
     "invalid save request: missing required fields: part"),
    (LoadRequest(app_name=APP, user_id=USER),
     "invalid load request: missing required fields: session_id, file_name"),
    (DeleteRequest(**IDENTITY),
     "invalid delete request: missing required fields: file_name"),
    (ListRequest(user_id=USER),
     "invalid list request: missing required fields: app_name, session_id"),
    (VersionsRequest(session_id=SESSION, file_name="f"),
     "invalid versions request: missing required fields: app_name, user_id"),
    (GetArtifactVersionRequest(),
     "invalid get artifact version request: missing required fields: "
     "app_name, user_id, session_id, file_name"),
    (SaveRequest(**IDENTITY, file_name="f", part=types.Part()),
     "invalid save request: part.inline_data or part.text has to be set"),
    (SaveRequest(**IDENTITY, file_name="f", part=types.Part(text="")),
     "invalid save request: part.inline_data or part.text has to be set"),
    (SaveRequest(**IDENTITY, file_name="dir/x", part=_OK_PART),
     "invalid save request: filename cannot contain path separators (file_name='dir/x')"),
    (LoadRequest(**IDENTITY, file_name="user:dir/x"),
     "invalid load request: filename cannot contain path separators (file_name='user:dir/x')"),
    (DeleteRequest(**IDENTITY, file_name="a\\b"),
     "invalid delete request: filename cannot contain path separators (file_name='a\\\\b')"),
    (VersionsRequest(**IDENTITY, file_name=".."),
     "invalid versions request: filename cannot be '.' or '..' (file_name='..')"),
    (GetArtifactVersionRequest(**IDENTITY, file_name="."),
     "invalid get artifact version request: filename cannot be '.' or '..' (file_name='.')"),
    (SaveRequest(**IDENTITY, file_name="a\0b", part=_OK_PART),
     "invalid save request: filename cannot contain NUL (file_name='a\\x00b')"),
    (ListRequest(app_name="../etc", user_id=USER, session_id=SESSION),
     "invalid list request: app_name cannot contain path separators or NUL "
     "(app_name='../etc')"),
    (LoadRequest(app_name=APP, user_id="u\\2", session_id=SESSION, file_name="f"),
     "invalid load request: user_id cannot contain path separators or NUL (user_id='u\\\\2')"),
    (VersionsRequest(app_name=APP, user_id=USER, session_id="s\0", file_name="f"),
     "invalid versions request: session_id cannot contain path separators or NUL "
     "(session_id='s\\x00')"),
    (DeleteRequest(app_name="..", user_id=USER, session_id=SESSION, file_name="f"),
     "invalid delete request: app_name cannot be '.' or '..' (app_name='..')"),
    (ListRequest(app_name=APP, user_id=".", session_id=SESSION),
     "invalid list request: user_id cannot be '.' or '..' (user_id='.')"),
    (SaveRequest(app_name=APP, user_id=USER, session_id="..", file_name="f", part=_OK_PART),
     "invalid save request: session_id cannot be '.' or '..' (session_id='..')"),
    (ListRequest(app_name=APP, user_id=USER, session_id="user"),
     "invalid list request: session_id cannot be 'user': it would alias the user scope; "
     "use a 'user:' file name to share an artifact across sessions"),
    (LoadRequest(**IDENTITY, file_name="f", version=-1),
     "invalid load request: version cannot be negative (version=-1); use 0 for the latest"),
    (DeleteRequest(**IDENTITY, file_name="f", version=-2),
     "invalid delete request: version cannot be negative (version=-2); use 0 for the latest"),
    (GetArtifactVersionRequest(**IDENTITY, file_name="f", version=-3),
     "invalid get artifact version request: version cannot be negative (version=-3); "
     "use 0 for the latest"),
    (SaveRequest(**IDENTITY, file_name="f", part=_OK_PART, version=-1),
     "invalid save request: version cannot be negative (version=-1); use 0 for the latest"),
    (SaveRequest(**IDENTITY, file_name="n" * 256, part=_OK_PART),
     "invalid save request: file_name is 256 bytes long; the limit is 255 "
     f"(file_name={'n' * 40!r}…)"),
    (LoadRequest(app_name=APP, user_id="é" * 65, session_id=SESSION, file_name="f"),
     "invalid load request: user_id is 130 bytes long; the limit is 128 "
     f"(user_id={'é' * 40!r}…)"),
    (SaveRequest(**IDENTITY, file_name="f", part=_OK_PART,
                 custom_metadata={"adk-idempotency-key": "x"}),
     "invalid save request: custom_metadata key 'adk-idempotency-key' is reserved; "
     "pass idempotency_key instead"),
    (SaveRequest(**IDENTITY, file_name="f", part=_OK_PART,
                 custom_metadata={"adk-text-part": "true"}),
     "invalid save request: custom_metadata key 'adk-text-part' is reserved; rename it"),
    (SaveRequest(**IDENTITY, file_name="f", part=_OK_PART,
                 custom_metadata={"adk-display-name": "x"}),
     "invalid save request: custom_metadata key 'adk-display-name' is reserved; rename it"),
    (SaveRequest(**IDENTITY, file_name="f", part=types.Part(inline_data=types.Blob())),
     "invalid save request: part.inline_data.data has to be set "
     "(b'' is valid zero-length data)"),
    (SaveRequest(**IDENTITY, file_name="f",
                 part=types.Part(text="x", inline_data=types.Blob(mime_type="image/png"))),
     "invalid save request: part.inline_data.data has to be set "
     "(b'' is valid zero-length data)"),
    (SaveRequest(**IDENTITY, file_name="C:x", part=_OK_PART),
     "invalid save request: filename cannot start with a drive prefix like 'C:' "
     "(file_name='C:x')"),
    (LoadRequest(**IDENTITY, file_name="c:foo"),
     "invalid load request: filename cannot start with a drive prefix like 'C:' "
     "(file_name='c:foo')"),
    (ListArtifactVersionsRequest(**IDENTITY, file_name="Z:"),
     "invalid list artifact versions request: filename cannot start with a drive prefix "
     "like 'C:' (file_name='Z:')"),
    (ListRequest(app_name="C:x", user_id=USER, session_id=SESSION),
     "invalid list request: app_name cannot start with a drive prefix like 'C:' "
     "(app_name='C:x')"),
    (DeleteRequest(app_name=APP, user_id="c:foo", session_id=SESSION, file_name="f"),
     "invalid delete request: user_id cannot start with a drive prefix like 'C:' "
     "(user_id='c:foo')"),
    (VersionsRequest(app_name=APP, user_id=USER, session_id="d:", file_name="f"),
     "invalid versions request: session_id cannot start with a drive prefix like 'C:' "
     "(session_id='d:')"),
    (ListArtifactVersionsRequest(app_name=APP),
     "invalid list artifact versions request: missing required fields: "
     "user_id, session_id, file_name"),
    (ListArtifactVersionsRequest(**IDENTITY, file_name="a/b"),
     "invalid list artifact versions request: filename cannot contain path separators "
     "(file_name='a/b')"),
]  # fmt: skip


async def _call(service: ArtifactService, request: ArtifactRequest) -> object:
    if isinstance(request, SaveRequest):
        return await service.save(request)
    if isinstance(request, LoadRequest):
        return await service.load(request)
    if isinstance(request, DeleteRequest):
        await service.delete(request)
        return None
    if isinstance(request, VersionsRequest):
        return await service.versions(request)
    if isinstance(request, GetArtifactVersionRequest):
        return await service.get_artifact_version(request)
    if isinstance(request, ListArtifactVersionsRequest):
        return await service.list_artifact_versions(request)
    assert isinstance(request, ListRequest)
    return await service.list(request)


@pytest.mark.parametrize(
    ("request_", "message"),
    VALIDATION_CASES,
    ids=[message.split(": ", 1)[1][:60] for _, message in VALIDATION_CASES],
)
async def test_invalid_requests_are_refused_with_one_message(
    artifact_service: ArtifactService, request_: ArtifactRequest, message: str
) -> None:
    """Each validation rule raises one InvalidArtifactRequestError (a ValueError) with its text."""
    with pytest.raises(InvalidArtifactRequestError) as info:
        await _call(artifact_service, request_)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)


async def test_refused_save_touches_nothing(artifact_service: ArtifactService) -> None:
    """A save refused by validation creates no version and no name."""
    with pytest.raises(InvalidArtifactRequestError):
        await save(artifact_service, "f", types.Part())
    with pytest.raises(InvalidArtifactRequestError):
        await save(artifact_service, "f", text("x"), version=-1)
    assert await names(artifact_service) == []
    assert await save(artifact_service, "f", text("x")) == 1


async def test_inline_data_without_data_is_refused_and_nothing_is_stored(
    artifact_service: ArtifactService,
) -> None:
    """inline_data whose data is None is refused by validation, naming the field; b"" is not."""
    empty = types.Part(inline_data=types.Blob(mime_type="image/png"))
    with pytest.raises(InvalidArtifactRequestError, match=r"part\.inline_data\.data has to be set"):
        await save(artifact_service, "f", empty)
    assert await names(artifact_service) == []
    assert await save(artifact_service, "f", inline(b"", "image/png")) == 1


@pytest.mark.parametrize("drive_name", ["C:x", "c:foo", "z:", "D:report.txt"])
async def test_drive_prefixed_names_and_ids_are_refused_like_path_separators(
    artifact_service: ArtifactService, drive_name: str
) -> None:
    """A Windows drive prefix (C:x) in a file name, app, user or session id stores nothing."""
    for fields in (
        {"file_name": drive_name},
        {"file_name": "f", "app_name": drive_name},
        {"file_name": "f", "user_id": drive_name},
        {"file_name": "f", "session_id": drive_name},
    ):
        request = SaveRequest.model_validate({**IDENTITY, "part": text("x"), **fields})
        with pytest.raises(InvalidArtifactRequestError):
            await artifact_service.save(request)
    assert await names(artifact_service) == []


async def test_user_prefixed_names_without_separators_are_valid(
    artifact_service: ArtifactService,
) -> None:
    """user:profile.json passes validation, and unusual but safe names are accepted too."""
    valid = ["user:profile.json", "...", "weird name (1).txt", "报告.txt", "ab:c", "1:x", "x.c:d"]
    for name in valid:
        assert await save(artifact_service, name, text("x")) == 1
    assert await names(artifact_service) == sorted(valid)
