"""FileArtifactService beyond the shared suite: layout, crash safety, several OS processes."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
import threading
import time
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pytest
from google.genai import types

from adk_temporal.artifacts import (
    FileArtifactService,
    GetArtifactVersionRequest,
    LoadRequest,
    SaveRequest,
    VersionConflictError,
    VersionsRequest,
)
from adk_temporal.ids import SessionKey

KEY = SessionKey("weather", "u-1", "s-1")


async def save(service: FileArtifactService, name: str, value: str, version: int = 0) -> int:
    """Save a text part and return its version."""
    request = SaveRequest.of(KEY, file_name=name, part=types.Part(text=value), version=version)
    return (await service.save(request)).version


async def versions(service: FileArtifactService, name: str) -> list[int]:
    """The versions of a name."""
    return (await service.versions(VersionsRequest.of(KEY, file_name=name))).versions


async def load_text(service: FileArtifactService, name: str, version: int = 0) -> str | None:
    """The text of a version."""
    request = LoadRequest.of(KEY, file_name=name, version=version)
    return (await service.load(request)).part.text


def name_dir(root: Path, name: str = "report.txt", scope: str = "s-1") -> Path:
    """Where the versions of a name live."""
    return root / "weather" / "u-1" / scope / name


def age(path: Path, seconds: float) -> None:
    """Make a file look as if it was last written ``seconds`` ago."""
    then = time.time() - seconds
    os.utime(path, (then, then))


async def test_layout_is_one_data_file_and_sidecar_per_version(tmp_path: Path) -> None:
    """Each version is a data file plus a JSON sidecar under app/user/scope/name."""
    service = FileArtifactService(tmp_path)
    await save(service, "report.txt", "v1")
    await save(service, "user:profile.json", "{}")
    session_files = {p.name for p in name_dir(tmp_path).iterdir()}
    data_files = [n for n in session_files if n.startswith("1.") and n.endswith(".data")]
    assert session_files == {"1.json", *data_files} and len(data_files) == 1
    assert (name_dir(tmp_path) / data_files[0]).read_bytes() == b"v1"
    sidecar = json.loads((name_dir(tmp_path) / "1.json").read_text())
    assert (sidecar["mime_type"], sidecar["is_text"]) == ("text/plain", True)
    assert (name_dir(tmp_path, "user:profile.json", scope="user") / "1.json").is_file()


async def test_canonical_uri_is_the_file_uri_of_the_version_data(tmp_path: Path) -> None:
    """canonical_uri is a file:// URI whose file holds exactly the version's bytes."""
    service = FileArtifactService(tmp_path)
    await save(service, "report.txt", "v1")
    await save(service, "report.txt", "v2")
    described = await service.get_artifact_version(
        GetArtifactVersionRequest.of(KEY, file_name="report.txt", version=1)
    )
    parsed = urllib.parse.urlparse(described.artifact_version.canonical_uri)
    assert parsed.scheme == "file"
    assert Path(urllib.request.url2pathname(parsed.path)).read_bytes() == b"v1"


async def test_relative_root_gives_absolute_uris(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative root is resolved once, so URIs stay valid after a chdir."""
    monkeypatch.chdir(tmp_path)
    service = FileArtifactService("store")
    monkeypatch.chdir("/")
    await save(service, "f", "x")
    described = await service.get_artifact_version(GetArtifactVersionRequest.of(KEY, file_name="f"))
    assert described.artifact_version.canonical_uri.startswith(f"file://{tmp_path}/store/")
    assert service.root == tmp_path / "store"


async def test_no_claim_or_temp_file_survives_a_save(tmp_path: Path) -> None:
    """A finished save leaves only its data file and sidecar behind."""
    service = FileArtifactService(tmp_path)
    await asyncio.gather(*(save(service, "report.txt", f"v{i}") for i in range(4)))
    leftovers = [p.name for p in name_dir(tmp_path).iterdir()]
    assert not [n for n in leftovers if n.endswith((".claim", ".tmp"))]
    assert len(leftovers) == 8


async def test_uncommitted_version_is_not_readable_and_its_stale_claim_is_reused(
    tmp_path: Path,
) -> None:
    """A crash after claiming and writing, before the commit, leaves nothing readable."""
    service = FileArtifactService(tmp_path)
    await save(service, "report.txt", "v1")
    await save(service, "report.txt", "v2")
    directory = name_dir(tmp_path)
    token = uuid.uuid4().hex
    # What a saver killed between writing and committing version 3 leaves behind.
    (directory / "3.claim").write_text("12345\n")
    (directory / f"3.{token}.data").write_bytes(b"half a vers")
    (directory / f".{token}.tmp").write_text('{"version": 3, "tok')
    for leftover in directory.iterdir():
        age(leftover, 3600)
    assert await versions(service, "report.txt") == [1, 2]
    assert await load_text(service, "report.txt") == "v2"
    with pytest.raises(FileNotFoundError, match="version 3 not found"):
        await load_text(service, "report.txt", 3)
    assert await save(service, "report.txt", "v3") == 3
    assert await load_text(service, "report.txt", 3) == "v3"


async def test_a_retried_save_takes_over_its_own_fresh_claim_and_leaves_no_gap(
    tmp_path: Path,
) -> None:
    """Killed mid-save holding 1.claim: the retry (same key) commits v1 and cleans up."""
    service = FileArtifactService(tmp_path)
    directory = name_dir(tmp_path)
    directory.mkdir(parents=True)
    token = uuid.uuid4().hex
    # What an attempt SIGKILLed while writing a large version 1 leaves behind: a fresh
    # claim naming its key, a partial data file and a partial sidecar.
    claim = {"pid": 4242, "key": "wf/e-1/call-1", "token": token}
    (directory / "1.claim").write_text(json.dumps(claim))
    (directory / f"1.{token}.data").write_bytes(b"\0" * 1000)
    (directory / f".{token}.tmp").write_text('{"version": 1')
    request = SaveRequest.of(
        KEY,
        file_name="report.txt",
        part=types.Part(text="the report"),
        idempotency_key="wf/e-1/call-1",
    )
    assert (await service.save(request)).version == 1
    assert await versions(service, "report.txt") == [1]
    assert await load_text(service, "report.txt", 1) == "the report"
    left = sorted(p.name for p in directory.iterdir())
    assert len(left) == 2 and "1.json" in left  # the sidecar and its own data file only
    assert (await service.save(request)).version == 1  # and it stays idempotent
    other = SaveRequest.of(KEY, file_name="report.txt", part=types.Part(text="next"))
    assert (await service.save(other)).version == 2


async def test_a_fresh_claim_of_another_key_is_not_taken_over(tmp_path: Path) -> None:
    """Only the same save may take a live claim: another key skips the number."""
    service = FileArtifactService(tmp_path)
    directory = name_dir(tmp_path)
    directory.mkdir(parents=True)
    claim = {"pid": 4242, "key": "someone-else", "token": uuid.uuid4().hex}
    (directory / "1.claim").write_text(json.dumps(claim))
    request = SaveRequest.of(
        KEY, file_name="report.txt", part=types.Part(text="x"), idempotency_key="mine"
    )
    assert (await service.save(request)).version == 2


async def test_live_claim_is_skipped_not_waited_for(tmp_path: Path) -> None:
    """A version claimed by a saver still in flight is skipped: the save takes the next one."""
    service = FileArtifactService(tmp_path)
    await save(service, "report.txt", "v1")
    (name_dir(tmp_path) / "2.claim").write_text("12345\n")
    assert await save(service, "report.txt", "v3") == 3
    assert await versions(service, "report.txt") == [1, 3]
    with pytest.raises(VersionConflictError, match="version 2 already exists"):
        await save(service, "report.txt", "v2", version=2)


async def test_claim_older_than_stale_after_is_broken(tmp_path: Path) -> None:
    """stale_after decides when a claim counts as abandoned."""
    service = FileArtifactService(tmp_path, stale_after=60)
    await save(service, "report.txt", "v1")
    claim = name_dir(tmp_path) / "2.claim"
    claim.write_text("12345\n")
    age(claim, 30)
    assert await save(service, "report.txt", "skips") == 3
    claim.write_text("12345\n")  # the skipping save left it alone; make it old enough now
    age(claim, 120)
    assert await save(service, "report.txt", "v2", version=2) == 2


async def test_blocking_file_io_runs_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes and fsyncs happen in worker threads, never on the event loop's thread."""
    threads: set[int] = set()
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        threads.add(threading.get_ident())
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    await save(FileArtifactService(tmp_path), "f", "x")
    assert threads and threading.get_ident() not in threads


_CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    from google.genai import types
    from adk_temporal.artifacts import FileArtifactService, SaveRequest

    async def main(root, tag):
        service = FileArtifactService(root)
        print("ready", flush=True)
        sys.stdin.readline()  # both processes start saving at the same moment
        requests = [
            SaveRequest(app_name="weather", user_id="u-1", session_id="s-1",
                        file_name="shared.txt", part=types.Part(text=f"{tag}-{i}"))
            for i in range(8)
        ]
        saved = await asyncio.gather(*(service.save(r) for r in requests))
        print(json.dumps({f"{tag}-{i}": s.version for i, s in enumerate(saved)}), flush=True)

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


async def test_two_processes_get_distinct_consecutive_versions(tmp_path: Path) -> None:
    """Two OS processes saving one name concurrently get versions 1..16, none shared."""
    children = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _CHILD,
            str(tmp_path),
            tag,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        for tag in ("a", "b")
    ]
    for child in children:
        assert child.stdout is not None
        assert await child.stdout.readline() == b"ready\n"
    for child in children:
        assert child.stdin is not None
        child.stdin.write(b"go\n")
        await child.stdin.drain()
    saved: dict[str, int] = {}
    for child in children:
        out, _ = await child.communicate()
        assert child.returncode == 0
        saved.update(json.loads(out))
    assert sorted(saved.values()) == list(range(1, 17))
    service = FileArtifactService(tmp_path)
    assert await versions(service, "shared.txt") == list(range(1, 17))
    for text, version in saved.items():
        assert await load_text(service, "shared.txt", version) == text
