"""Data keys: the key stores, the cache, the codec's choice of key, sealed values, forget."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from google.genai import types
from temporalio.api.common.v1 import Payload
from temporalio.converter import ActivitySerializationContext, WorkflowSerializationContext

from adk_temporal.artifacts import InMemoryArtifactService, LoadRequest, SaveRequest
from adk_temporal.codec import (
    EncryptionCodec,
    EncryptionKeys,
    KeyFileError,
    UnknownKeyError,
    load_keys,
    write_key_file,
)
from adk_temporal.errors import ForgottenError, InvalidIdError
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey
from adk_temporal.keys import (
    CannotForgetError,
    DataKeys,
    DataKeySettings,
    FileKeyStore,
    ForgetEntry,
    KeyStore,
    KeyStoreError,
    SealedArtifactService,
    SealedValueError,
    SqliteKeyStore,
    StoreSealer,
    Target,
    forget,
    sweep,
)
from adk_temporal.sessions import InMemorySessionService, SqliteSessionService

PLAIN = Payload(metadata={"encoding": b"json/plain"}, data=b'"the secret plan"')
S1 = SessionKey("app", "u", "s1")


@pytest.fixture(params=["file", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> KeyStore:
    """A key store of each embedded backend, empty."""
    if request.param == "file":
        return FileKeyStore(tmp_path / "keys")
    return SqliteKeyStore(tmp_path / "sessions.db")


def _codec(store: KeyStore, **settings: object) -> EncryptionCodec:
    keys = EncryptionKeys.generate()
    return EncryptionCodec(
        EncryptionKeys(keys.current, keys.keys, data_keys=DataKeySettings.model_validate(settings)),
        key_store=store,
    )


def _keys(codec: EncryptionCodec) -> DataKeys:
    assert codec.data_keys is not None
    return codec.data_keys


def _scoped(codec: EncryptionCodec, workflow_id: str | None) -> EncryptionCodec:
    return codec.with_context(WorkflowSerializationContext("default", workflow_id or ""))


def test_one_live_key_per_scope_however_many_threads_make_it(store: KeyStore) -> None:
    """Sixteen threads making the first key of one scope all get the same key."""
    keys = _keys(_codec(store))
    got: list[str] = []
    threads = [
        threading.Thread(target=lambda: got.append(keys.for_scope("app/u/s1").key_id))
        for _ in range(16)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(got)) == 1 and store.scopes("app") == ["app/u/s1"]


def test_forget_reaches_exactly_the_scopes_within_the_prefix(store: KeyStore) -> None:
    """Forgetting app/u takes its sessions and user key, never app/u2 or app/uu's."""
    keys = _keys(_codec(store))
    made = {s: keys.for_scope(s).key_id for s in ("app/u", "app/u/s1", "app/u2/s1", "app/uu/s")}
    forgotten = keys.forget("app/u")
    assert sorted(k.scope for k in forgotten) == ["app/u", "app/u/s1"]
    assert store.scopes("app") == ["app/u2/s1", "app/uu/s"]
    gone = store.get(made["app/u/s1"])
    assert gone is not None and not hasattr(gone, "wrapped")
    assert keys.forget("app/u") == []


def test_a_forgotten_key_is_refused_typed_and_a_new_session_gets_a_new_key(
    store: KeyStore,
) -> None:
    """After forget, the old key id raises ForgottenError; the scope's next key is another."""
    keys = _keys(_codec(store))
    old = keys.for_scope("app/u/s1").key_id
    keys.forget("app/u/s1")
    with pytest.raises(ForgottenError) as caught:
        keys.by_id(old)
    assert caught.value.scope == "app/u/s1" and caught.value.key_id == old
    assert keys.for_scope("app/u/s1").key_id != old


def test_other_processes_drop_a_forgotten_key_when_their_cache_expires(tmp_path: Path) -> None:
    """A second process's cached key opens payloads until cache_seconds pass, then not."""
    store = SqliteKeyStore(tmp_path / "sessions.db")
    now = [0.0]
    writer = _codec(store)
    reader = EncryptionCodec(
        EncryptionKeys(writer.current_key_id, load_master(writer)),
        key_store=store,
    )
    assert reader.data_keys is not None
    reader.data_keys = DataKeys(store, reader, cache_seconds=10, clock=lambda: now[0])
    sealed = _scoped(writer, "adk/app/u/s1").encode_payload(PLAIN)
    assert reader.decode_payload(sealed) == PLAIN
    _keys(writer).forget("app/u/s1")
    now[0] = 9.0
    assert reader.decode_payload(sealed) == PLAIN
    now[0] = 10.5
    with pytest.raises(ForgottenError):
        reader.decode_payload(sealed)


def load_master(codec: EncryptionCodec) -> dict[str, bytes]:
    """The master keys of ``codec`` (a second process reads the same key file)."""
    return dict(codec._file.ring.keys.keys)


def test_a_key_moved_to_another_scope_in_the_store_does_not_unwrap(tmp_path: Path) -> None:
    """Editing a key's scope in the database makes it fail to unwrap, not open s2's data."""
    path = tmp_path / "sessions.db"
    keys = _keys(_codec(SqliteKeyStore(path)))
    stolen = keys.for_scope("app/u/s1").key_id
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE adk_data_keys SET scope = 'app/u/s2' WHERE key_id = ?", (stolen,))
    fresh = DataKeys(SqliteKeyStore(path), keys._master)
    with pytest.raises(KeyStoreError, match="does not unwrap"):
        fresh.for_scope("app/u/s2")


def test_an_unknown_or_malformed_data_key_id_names_the_store(tmp_path: Path) -> None:
    """A key id the store never held, or a path-like one, is a KeyStoreError, never a read
    outside the store's directory."""
    keys = _keys(_codec(FileKeyStore(tmp_path / "keys")))
    (tmp_path / "evil.json").write_text("{}")
    for key_id in ("dk.aaaaaaaaaaaaaaaaaaaaaaaaaa", "dk/../../evil", "../evil"):
        with pytest.raises(KeyStoreError, match="not in FileKeyStore"):
            keys.by_id(key_id)


async def test_the_codec_seals_a_sessions_payloads_with_its_key_and_others_with_the_master(
    tmp_path: Path,
) -> None:
    """adk/{app}/{user}/{session} payloads name the session's data key; a notification's,
    a standalone activity's and a context-free payload name the master key."""
    codec = _codec(FileKeyStore(tmp_path / "keys"))
    activity = ActivitySerializationContext("default", "1", None, None, "adk/app/u/s1", None, False)
    key_ids = {
        "session": (await _scoped(codec, "adk/app/u/s1").encode([PLAIN]))[0],
        "activity": (await codec.with_context(activity).encode([PLAIN]))[0],
        "notify": (await _scoped(codec, "adk-notify-0123").encode([PLAIN]))[0],
        "bad id": (await _scoped(codec, "adk/app/u/..").encode([PLAIN]))[0],
        "none": (await codec.encode([PLAIN]))[0],
    }
    named = {k: p.metadata["encryption-key-id"].decode() for k, p in key_ids.items()}
    assert named["session"] == named["activity"] != codec.current_key_id
    assert named["session"].startswith("dk.")
    assert {named["notify"], named["bad id"], named["none"]} == {codec.current_key_id}
    assert await codec.decode(list(key_ids.values())) == [PLAIN] * 5


async def test_user_level_keys_share_one_key_across_a_users_sessions(tmp_path: Path) -> None:
    """With data_keys.level "user", two sessions of a user share a key; another user not."""
    codec = _codec(FileKeyStore(tmp_path / "keys"), level="user")
    ids = [
        (await _scoped(codec, f"adk/app/{u}/{s}").encode([PLAIN]))[0].metadata["encryption-key-id"]
        for u, s in (("u", "s1"), ("u", "s2"), ("v", "s1"))
    ]
    assert ids[0] == ids[1] != ids[2]


def test_payloads_sealed_before_data_keys_still_open_and_data_keys_need_the_section(
    tmp_path: Path,
) -> None:
    """A master-key payload opens with data keys on; a data-key payload read without them
    says which section is missing."""
    plain_codec = EncryptionCodec(EncryptionKeys.generate())
    old = plain_codec.encode_payload(PLAIN)
    with_keys = EncryptionCodec(
        EncryptionKeys(plain_codec.current_key_id, load_master(plain_codec)),
        key_store=FileKeyStore(tmp_path / "keys"),
    )
    assert with_keys.decode_payload(old) == PLAIN
    sealed = _scoped(with_keys, "adk/app/u/s1").encode_payload(PLAIN)
    with pytest.raises(UnknownKeyError, match="data_keys"):
        plain_codec.decode_payload(sealed)


def test_the_key_file_data_keys_section_round_trips_and_is_checked(tmp_path: Path) -> None:
    """data_keys survives write, load and rotate; a bad level or field is a KeyFileError."""
    path = tmp_path / "keys.json"
    keys = EncryptionKeys.generate()
    settings = DataKeySettings(level="user", store="sqlite:sessions.db", seal_stores=True)
    write_key_file(path, EncryptionKeys(keys.current, keys.keys, data_keys=settings))
    assert load_keys(path).data_keys == settings
    assert load_keys(path).rotated().data_keys == settings
    codec = EncryptionCodec.from_file(path)
    assert codec.seals_stores and isinstance(_keys(codec).store, SqliteKeyStore)
    ring = json.loads(path.read_text())
    for section, field in (({"level": "tenant"}, "level"), ({"stores": "x"}, "stores")):
        with pytest.raises(KeyFileError, match=f"data_keys.*{field}"):
            EncryptionKeys.from_json(json.dumps({**ring, "data_keys": section}))


def test_targets_check_their_ids() -> None:
    """A target's ids pass the id grammar; a session needs its user."""
    assert Target(app_name="a", user_id="u").scope == "a/u"
    with pytest.raises(InvalidIdError):
        Target(app_name="a", session_id="s").check()
    with pytest.raises(InvalidIdError):
        Target(app_name="a", user_id="x/y").check()


async def test_forget_refuses_what_it_cannot_erase_and_deletes_nothing(tmp_path: Path) -> None:
    """Keys per user cannot erase one session; a forget without a reason is refused; the
    session stays."""
    keys = _keys(_codec(FileKeyStore(tmp_path / "keys"), level="user"))
    sessions = InMemorySessionService()
    await sessions.create(S1)
    target = Target(app_name="app", user_id="u", session_id="s1")
    with pytest.raises(CannotForgetError, match="per user"):
        await forget(target, keys=keys, sessions=sessions, artifacts=None, by="dpo", reason="x")
    user = Target(app_name="app", user_id="u")
    with pytest.raises(CannotForgetError, match="reason"):
        await forget(user, keys=keys, sessions=sessions, artifacts=None, by="dpo", reason=" ")
    assert (await sessions.get(S1)).id == "s1"


async def test_forgetting_a_user_takes_its_sessions_user_artifacts_state_and_keys(
    tmp_path: Path,
) -> None:
    """A user's forget deletes every session, its user: artifacts and state; another user's
    stay; the log entry lists what went."""
    keys = _keys(_codec(FileKeyStore(tmp_path / "keys")))
    sessions = InMemorySessionService()
    artifacts = SealedArtifactService(InMemoryArtifactService(), keys)
    other = SessionKey("app", "v", "s1")
    for key in (S1, SessionKey("app", "u", "s2"), other):
        await sessions.create(key, state={"user:plan": key.user_id})
        for name in ("notes.txt", "user:profile.txt"):
            part = types.Part(text=f"{key} {name}")
            await artifacts.save(SaveRequest.of(key, file_name=name, part=part))
    entry = await forget(
        Target(app_name="app", user_id="u"),
        keys=keys,
        sessions=sessions,
        artifacts=artifacts,
        by="dpo",
        reason="ticket 9",
    )
    assert entry.sessions == ["app/u/s1", "app/u/s2"] and entry.artifacts == 3
    assert await sessions.list("app", "u") == []
    assert (await sessions.get_state(other))["user:plan"] == "v"
    assert keys.store.entries("app/u/s1") == [entry]
    assert keys.store.scopes("app") == ["app/v", "app/v/s1"]
    loaded = await artifacts.load(LoadRequest.of(other, file_name="user:profile.txt"))
    assert loaded.part.text == "app/v/s1 user:profile.txt"


async def test_sealed_artifacts_refuse_altered_or_moved_bytes(tmp_path: Path) -> None:
    """Bytes changed in the store, or copied under another name, fail authentication."""
    keys = _keys(_codec(FileKeyStore(tmp_path / "keys")))
    inner = InMemoryArtifactService()
    artifacts = SealedArtifactService(inner, keys)
    blob = types.Part.from_bytes(data=b"\x00pdf", mime_type="application/pdf")
    await artifacts.save(SaveRequest.of(S1, file_name="a.pdf", part=blob))
    stored = (await inner.load(LoadRequest.of(S1, file_name="a.pdf"))).part
    assert stored.inline_data is not None and b"pdf" not in (stored.inline_data.data or b"")
    await inner.save(SaveRequest.of(S1, file_name="b.pdf", part=stored))
    with pytest.raises(SealedValueError, match="moved"):
        await artifacts.load(LoadRequest.of(S1, file_name="b.pdf"))
    loaded = await artifacts.load(LoadRequest.of(S1, file_name="a.pdf"))
    assert loaded.part.inline_data is not None and loaded.part.inline_data.data == b"\x00pdf"


async def test_sealed_rows_hold_no_plaintext_and_older_rows_still_read(tmp_path: Path) -> None:
    """With a sealer, the SQLite file holds no event or state text; rows written before
    sealing was turned on read as they were."""
    path = tmp_path / "sessions.db"
    plain = SqliteSessionService(path)
    old = SessionKey("app", "u", "old")
    await plain.create(old, state={"plan": "old-secret"})
    await plain.close()
    keys = _keys(_codec(SqliteKeyStore(path)))
    sealed = SqliteSessionService(path, sealer=StoreSealer(keys))
    await sealed.create(S1, state={"plan": "top-secret"})
    event = Event(
        id="e1",
        invocation_id="e-1",
        author="user",
        content=types.Content(role="user", parts=[types.Part(text="launch codes 1234")]),
    )
    await sealed.append_events(S1, [event])
    assert (await sealed.get(S1)).events[0].text() == "launch codes 1234"
    assert (await sealed.get_state(old))["plan"] == "old-secret"
    await sealed.close()
    raw = b"".join(p.read_bytes() for p in path.parent.glob(f"{path.name}*") if p.is_file())
    assert b"launch codes" not in raw and b"top-secret" not in raw


async def _sweep(
    keys: DataKeys, sessions: InMemorySessionService, open_runs: set[str], dry_run: bool
) -> list[tuple[str, str]]:
    async def run_is_open(key: SessionKey) -> bool:
        return key.session_id in open_runs

    report = await sweep(
        "app",
        retention=timedelta(days=30),
        keys=keys,
        sessions=sessions,
        artifacts=None,
        run_is_open=run_is_open,
        dry_run=dry_run,
        clock=lambda: 100 * 86400.0,
    )
    return [(s.session, s.outcome) for s in report.sessions]


async def test_a_sweep_keeps_sessions_with_an_open_run_and_a_dry_run_deletes_nothing(
    tmp_path: Path,
) -> None:
    """Idle past the limit with a run still open: kept and said; a dry run only lists."""
    keys = _keys(_codec(FileKeyStore(tmp_path / "keys")))
    clock: list[float] = [0.0]
    sessions = InMemorySessionService(clock=lambda: clock[0])
    for session_id, day in (("old", 10), ("waiting", 20), ("fresh", 90)):
        clock[0] = day * 86400.0
        await sessions.create(SessionKey("app", "u", session_id))
    listed = await _sweep(keys, sessions, {"waiting"}, dry_run=True)
    assert listed == [("app/u/old", "would_forget"), ("app/u/waiting", "kept: a run is open")]
    assert len(await sessions.list("app", "u")) == 3
    done = await _sweep(keys, sessions, {"waiting"}, dry_run=False)
    assert done[0] == ("app/u/old", "forgotten")
    assert [s.id for s in await sessions.list("app", "u")] == ["fresh", "waiting"]
    assert [e.target for e in keys.store.entries()] == ["app/u/old"]


def test_the_forget_log_survives_a_reopened_store(store: KeyStore, tmp_path: Path) -> None:
    """Entries written to the log read back, oldest first, filtered by scope."""
    for target in ("app/u/s1", "app/v"):
        store.record(
            ForgetEntry(at=1.0, target=target, level="session", by="x", channel="cli", reason="r")
        )
    reopened: Callable[[], KeyStore] = (
        (lambda: FileKeyStore(tmp_path / "keys"))
        if isinstance(store, FileKeyStore)
        else (lambda: SqliteKeyStore(tmp_path / "sessions.db"))
    )
    again = reopened()
    assert [e.target for e in again.entries()] == ["app/u/s1", "app/v"]
    assert [e.target for e in again.entries("app/u")] == ["app/u/s1"]
    assert [e.target for e in again.entries("app/v/s9")] == ["app/v"]


async def test_forgetting_an_app_takes_every_user_and_the_app_state(tmp_path: Path) -> None:
    """A tenant's forget covers every user's sessions, even one whose rows only the key store
    still knows, and the app state; another app is untouched."""
    keys = _keys(_codec(FileKeyStore(tmp_path / "keys")))
    sessions = InMemorySessionService()
    for key in (S1, SessionKey("app", "v", "s2"), SessionKey("other", "u", "s1")):
        await sessions.create(key, state={"app:motd": key.app_name})
        keys.for_scope(keys.scope_of(key))
    keys.for_scope("app/w/gone")  # its rows were deleted by hand; its key remains
    entry = await forget(
        Target(app_name="app"),
        keys=keys,
        sessions=sessions,
        artifacts=None,
        by="ops",
        reason="tenant offboarded",
    )
    assert entry.sessions == ["app/u/s1", "app/v/s2", "app/w/gone"] and len(entry.key_ids) == 3
    assert await sessions.user_ids("app") == [] and keys.store.scopes("app") == []
    assert (await sessions.get_state(SessionKey("other", "u", "s1"))) == {"app:motd": "other"}


def test_a_process_keeps_a_bounded_number_of_keys() -> None:
    """Serving 5,000 sessions leaves at most 4,096 keys in memory; each still opens."""
    keys = _keys(_codec(SqliteKeyStore(":memory:")))
    made = [keys.for_scope(f"app/u/s{n}") for n in range(5000)]
    assert len(keys._by_scope) <= 4096 and len(keys._by_id) <= 4096
    assert keys.by_id(made[0].key_id).scope == "app/u/s0"
