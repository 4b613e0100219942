"""An artifact service on a local directory: the embedded default, safe for several processes.

Layout under ``root`` (path components come only from validated names)::

    {app}/{user}/{session, or "user" for user: names}/{file_name}/
        {v}.json            the version's sidecar: its commit record and metadata
        {v}.{token}.data    the version's bytes, named by the sidecar
        {v}.claim           present while a save of version v is in flight
        .{token}.tmp        a sidecar being written

How a save claims and commits version ``v``:

1. **Claim**: create ``{v}.claim`` with ``O_EXCL``. Only one saver, in any process, holds a
   number at a time; the others move on to ``v + 1`` at once, so concurrent savers get
   consecutive numbers without waiting for each other.
2. **Write**: the bytes go to ``{v}.{token}.data`` and the sidecar to a temp file, both
   fsynced. Nothing names them yet, so a crash here leaves nothing readable.
3. **Commit**: hard-link the temp sidecar to ``{v}.json``. ``link`` fails if the name
   exists, so it is the single atomic, exclusive step that makes the version exist; a saver
   that lost its claim (see below) can never overwrite a committed version.
4. Remove the claim.

A claim records its saver's idempotency key and data token. A claim older than
``stale_after`` seconds belongs to a saver that crashed (or stalled); the next saver that
meets it removes it and takes the number, so a crash never blocks a version number forever.
A claim holding *our* idempotency key is ours whatever its age — an earlier attempt of the
same save that was killed — and the retry takes it over and commits that very number, so a
crashed idempotent save leaves no gap. (A save without a key, made while a crashed claim is
still fresh, skips its number; if it commits, that number stays a gap.) After a commit, the
files an abandoned attempt left for the same number (its ``.data`` and ``.tmp``) are removed.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import os
import re
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from google.genai import types
from pydantic import AwareDatetime, BaseModel, Field

from adk_temporal.artifacts._content import StoredContent, decode_part, encode_part
from adk_temporal.artifacts.requests import (
    USER_SCOPE,
    ArtifactVersion,
    DeleteRequest,
    GetArtifactVersionRequest,
    GetArtifactVersionResponse,
    ListArtifactVersionsRequest,
    ListArtifactVersionsResponse,
    ListRequest,
    ListResponse,
    LoadRequest,
    LoadResponse,
    SaveRequest,
    SaveResponse,
    VersionsRequest,
    VersionsResponse,
    not_found_error,
    scope_segment,
    validate_request,
    version_exists_error,
)
from adk_temporal.artifacts.service import IDEMPOTENCY_WINDOW
from adk_temporal.faults import fault_point

__all__ = ["DEFAULT_STALE_AFTER", "FileArtifactService"]

DEFAULT_STALE_AFTER = 300.0
"""Seconds after which an uncommitted claim is taken to belong to a crashed saver."""

_SIDECAR = re.compile(r"([1-9][0-9]*)\.json")


class _Sidecar(BaseModel):
    """What a version's ``{v}.json`` records."""

    version: int
    # Only the token is stored, never a path: the data file's name is rebuilt from the
    # version and a hex token, so an edited sidecar cannot point outside the directory.
    token: str = Field(pattern=r"^[0-9a-f]{32}$")
    mime_type: str
    is_text: bool
    custom_metadata: dict[str, str]
    create_time: AwareDatetime
    idempotency_key: str | None
    # Defaulted: sidecars written before display names were kept have none.
    display_name: str | None = None

    def data_name(self) -> str:
        """The name of the version's data file."""
        return f"{self.version}.{self.token}.data"


def _utc_now() -> datetime:
    return datetime.now(UTC)


class FileArtifactService:
    """Artifacts as files under ``root``; survives restarts, shared safely by processes.

    Every blocking file operation runs in a worker thread (``asyncio.to_thread``).

    Args:
        root: Directory holding the artifacts; created on first save.
        clock: Returns the creation time of new versions (timezone-aware); injectable for tests.
        stale_after: Seconds after which an uncommitted claim is treated as abandoned. It must
            exceed the longest a save can take between its claim and its commit.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        clock: Callable[[], datetime] = _utc_now,
        stale_after: float = DEFAULT_STALE_AFTER,
    ) -> None:
        # Absolute, so canonical URIs are valid file:// URIs whatever the working directory.
        self._root = Path(root).resolve()
        self._clock = clock
        self._stale_after = stale_after

    @property
    def root(self) -> Path:
        """The absolute directory holding the artifacts."""
        return self._root

    async def save(self, request: SaveRequest) -> SaveResponse:
        """Store a new version; see :meth:`ArtifactService.save`."""
        validate_request(request)
        return SaveResponse(version=await asyncio.to_thread(self._save, request))

    async def load(self, request: LoadRequest) -> LoadResponse:
        """Return a stored part; see :meth:`ArtifactService.load`.

        A part saved as text loads as text; inline data loads with its mime type.
        """
        validate_request(request)
        return LoadResponse(part=await asyncio.to_thread(self._load, request))

    async def delete(self, request: DeleteRequest) -> None:
        """Delete one or every version; see :meth:`ArtifactService.delete`."""
        validate_request(request)
        await asyncio.to_thread(self._delete, request)

    async def list(self, request: ListRequest) -> ListResponse:
        """List the session's and the user's names; see :meth:`ArtifactService.list`."""
        validate_request(request)
        return ListResponse(file_names=await asyncio.to_thread(self._list, request))

    async def versions(self, request: VersionsRequest) -> VersionsResponse:
        """List a name's versions ascending; see :meth:`ArtifactService.versions`."""
        validate_request(request)
        versions = await asyncio.to_thread(_committed, self._name_dir(request))
        if not versions:
            raise not_found_error(request)
        return VersionsResponse(versions=versions)

    async def get_artifact_version(
        self, request: GetArtifactVersionRequest
    ) -> GetArtifactVersionResponse:
        """Describe a version; see :meth:`ArtifactService.get_artifact_version`.

        ``canonical_uri`` is the ``file://`` URI of the version's data file.
        """
        validate_request(request)
        directory = self._name_dir(request)
        sidecar = await asyncio.to_thread(self._resolve, directory, request)
        return GetArtifactVersionResponse(artifact_version=_describe(directory, sidecar))

    async def list_artifact_versions(
        self, request: ListArtifactVersionsRequest
    ) -> ListArtifactVersionsResponse:
        """Describe every version; see :meth:`ArtifactService.list_artifact_versions`."""
        validate_request(request)
        directory = self._name_dir(request)
        sidecars = await asyncio.to_thread(_read_sidecars, directory)
        if not sidecars:
            raise not_found_error(request)
        return ListArtifactVersionsResponse(
            artifact_versions=[_describe(directory, sidecar) for sidecar in sidecars]
        )

    def _name_dir(
        self,
        request: SaveRequest
        | LoadRequest
        | DeleteRequest
        | VersionsRequest
        | GetArtifactVersionRequest
        | ListArtifactVersionsRequest,
    ) -> Path:
        scope = scope_segment(request.session_id, request.file_name)
        return self._root / request.app_name / request.user_id / scope / request.file_name

    def _save(self, request: SaveRequest) -> int:
        assert request.part is not None  # guaranteed by validate_request
        directory = self._name_dir(request)
        directory.mkdir(parents=True, exist_ok=True)
        committed = _committed(directory)
        if request.idempotency_key is not None:
            for version in reversed(committed[-IDEMPOTENCY_WINDOW:]):
                sidecar = _read_sidecar(directory, version)
                if sidecar is not None and sidecar.idempotency_key == request.idempotency_key:
                    return version
        content = encode_part(request.part)

        def commit(version: int) -> bool:
            sidecar = _Sidecar(
                version=version,
                token=uuid.uuid4().hex,
                mime_type=content.mime_type,
                is_text=content.is_text,
                display_name=content.display_name,
                custom_metadata=dict(request.custom_metadata or {}),
                create_time=self._clock(),
                idempotency_key=request.idempotency_key,
            )
            return self._commit(directory, sidecar, content.data)

        if request.version:
            if not commit(request.version):
                if self._made_by(directory, request.version, request.idempotency_key):
                    return request.version
                raise version_exists_error(request, request.version)
            return request.version
        version = (committed[-1] if committed else 0) + 1
        while not commit(version):
            # Another attempt of this very save (a retry running while the first still
            # ran) may have committed the number first.
            if self._made_by(directory, version, request.idempotency_key):
                return version
            version += 1
        return version

    @staticmethod
    def _made_by(directory: Path, version: int, key: str | None) -> bool:
        sidecar = _read_sidecar(directory, version)
        return key is not None and sidecar is not None and sidecar.idempotency_key == key

    def _commit(self, directory: Path, sidecar: _Sidecar, data: bytes) -> bool:
        """Claim, write and commit one version; False when the number is taken or held."""
        version = sidecar.version
        claimed = self._claim(directory / f"{version}.claim", sidecar)
        if claimed is None:
            return False
        claim, abandoned = claimed
        try:
            # The previous holder of this claim may have committed and released it after
            # our directory scan.
            if (directory / f"{version}.json").exists():
                return False
            data_path = directory / sidecar.data_name()
            temp_path = directory / f".{sidecar.token}.tmp"
            committed = False
            try:
                _write_new(data_path, data)
                _write_new(temp_path, sidecar.model_dump_json().encode())
                fault_point("artifact.before_commit")
                try:
                    os.link(temp_path, directory / f"{version}.json")
                except FileExistsError:
                    return False
                committed = True
                _fsync_dir(directory)
                _remove_leftovers(directory, version, sidecar.token, abandoned)
                return True
            finally:
                temp_path.unlink(missing_ok=True)
                if not committed:
                    data_path.unlink(missing_ok=True)
        finally:
            _release(claim)

    def _claim(
        self, path: Path, sidecar: _Sidecar
    ) -> tuple[tuple[Path, int], builtins.list[str]] | None:
        """Create a claim file exclusively; None if a live saver holds it.

        Returns:
            The claim, and the data tokens of the abandoned claims it replaced (an earlier
            attempt of this save, or a crashed saver's), whose files go after the commit.
        """
        abandoned: builtins.list[str] = []
        for _ in range(3):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                holder = _read_claim(path)
                if holder is None:
                    continue  # released between our open and our read: try again
                key, token, age = holder
                ours = key is not None and key == sidecar.idempotency_key
                if not ours and age <= self._stale_after:
                    return None
                # Two savers may both break the same stale claim and both go on to write;
                # the exclusive link at commit time still lets only one of them win.
                if token is not None:
                    abandoned.append(token)
                path.unlink(missing_ok=True)
                continue
            try:
                record = {
                    "pid": os.getpid(),
                    "key": sidecar.idempotency_key,
                    "token": sidecar.token,
                }
                os.write(fd, json.dumps(record).encode())
                return (path, os.fstat(fd).st_ino), abandoned
            finally:
                os.close(fd)
        return None

    def _load(self, request: LoadRequest) -> types.Part:
        directory = self._name_dir(request)
        sidecar = self._resolve(directory, request)
        try:
            data = (directory / sidecar.data_name()).read_bytes()
        except FileNotFoundError:
            # Deleted between reading the sidecar and the data.
            raise not_found_error(request, sidecar.version) from None
        return decode_part(
            StoredContent(
                data=data,
                mime_type=sidecar.mime_type,
                is_text=sidecar.is_text,
                display_name=sidecar.display_name,
            )
        )

    def _resolve(
        self, directory: Path, request: LoadRequest | GetArtifactVersionRequest
    ) -> _Sidecar:
        version = request.version
        if not version:
            committed = _committed(directory)
            if not committed:
                raise not_found_error(request)
            version = committed[-1]
        sidecar = _read_sidecar(directory, version)
        if sidecar is None:
            raise not_found_error(request, version)
        return sidecar

    def _delete(self, request: DeleteRequest) -> None:
        directory = self._name_dir(request)
        targets = [request.version] if request.version else _committed(directory)
        for version in targets:
            sidecar = _read_sidecar(directory, version)
            if sidecar is None:
                continue
            # Sidecar first: once it is gone the version no longer exists for readers, so a
            # crash in between leaves an unread data file, never a version without bytes.
            (directory / f"{version}.json").unlink(missing_ok=True)
            (directory / sidecar.data_name()).unlink(missing_ok=True)

    def _list(self, request: ListRequest) -> builtins.list[str]:
        names: set[str] = set()
        for scope in (request.session_id, USER_SCOPE):
            scope_dir = self._root / request.app_name / request.user_id / scope
            try:
                entries = list(os.scandir(scope_dir))
            except FileNotFoundError:
                continue
            names.update(e.name for e in entries if e.is_dir() and _committed(Path(e.path)))
        return sorted(names)


def _committed(directory: Path) -> list[int]:
    """The committed versions in ``directory``, ascending."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return sorted(int(m.group(1)) for name in names if (m := _SIDECAR.fullmatch(name)))


def _read_sidecars(directory: Path) -> list[_Sidecar]:
    """The sidecars of the committed versions in ``directory``, ascending by version."""
    # A version deleted between the listing and its read is left out, as if listed later.
    found = (_read_sidecar(directory, version) for version in _committed(directory))
    return [sidecar for sidecar in found if sidecar is not None]


def _describe(directory: Path, sidecar: _Sidecar) -> ArtifactVersion:
    """A version's metadata; its canonical URI is the ``file://`` URI of its data file."""
    return ArtifactVersion(
        version=sidecar.version,
        canonical_uri=(directory / sidecar.data_name()).as_uri(),
        custom_metadata=sidecar.custom_metadata,
        create_time=sidecar.create_time,
        mime_type=sidecar.mime_type,
    )


def _read_sidecar(directory: Path, version: int) -> _Sidecar | None:
    try:
        raw = (directory / f"{version}.json").read_bytes()
    except FileNotFoundError:
        return None
    return _Sidecar.model_validate_json(raw)


def _read_claim(path: Path) -> tuple[str | None, str | None, float] | None:
    """A claim's idempotency key, data token and age; ``None`` if it is gone.

    Claims written by earlier releases (a bare pid) or cut short by a crash carry no key
    and no token.
    """
    try:
        age = time.time() - path.stat().st_mtime
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        record = json.loads(raw)
    except ValueError:
        return None, None, age
    if not isinstance(record, dict):
        return None, None, age
    key, token = record.get("key"), record.get("token")
    valid_token = isinstance(token, str) and re.fullmatch(r"[0-9a-f]{32}", token) is not None
    return (key if isinstance(key, str) else None), (token if valid_token else None), age


def _remove_leftovers(directory: Path, version: int, kept: str, abandoned: list[str]) -> None:
    """Remove what abandoned attempts at ``version`` wrote; the committed token stays.

    Safe against a live straggler: one still writing ``version`` will fail at its commit
    (the sidecar exists) and remove its own files anyway.
    """
    for name in os.listdir(directory):
        if name.startswith(f"{version}.") and name.endswith(".data") and kept not in name:
            (directory / name).unlink(missing_ok=True)
    for token in abandoned:
        (directory / f".{token}.tmp").unlink(missing_ok=True)


def _write_new(path: Path, data: bytes) -> None:
    """Write a file that must not exist yet, flushed to disk before it can be committed."""
    with open(path, "xb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _fsync_dir(directory: Path) -> None:
    # Makes the commit's new directory entry survive a power loss, not just a process crash.
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _release(claim: tuple[Path, int]) -> None:
    path, inode = claim
    try:
        if path.stat().st_ino == inode:
            # Only our own claim: if ours was broken as stale, the file is another saver's.
            path.unlink(missing_ok=True)
    except FileNotFoundError:
        pass
