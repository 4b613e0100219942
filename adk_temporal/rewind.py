"""Rewind and fork: a session as it stood before, or as of, one of its invocations.

Rewinding a session to before invocation *X* (ADK's ``Runner.rewind_async``) appends **one**
event that undoes what happened since *X* began; nothing is deleted, so the session keeps
its whole record:

* its ``state_delta`` gives every session key written since then its value from before —
  the initial state included (:meth:`~adk_temporal.sessions.ConversationStore.
  get_initial_state`; ADK rebuilds it from events alone and loses it, ADK #4933) — and
  removes the keys that did not exist yet (:data:`~adk_temporal.sessions.
  REMOVED_STATE_VALUE`; ADK assigns ``None``). Keys nothing wrote since are left alone.
* every session artifact saved since then gets its earlier content back as a **new**
  version, loaded and saved again on every backend (ADK saved a ``file_data`` reference
  that the File and GCS services cannot store, ADK #4932); one that did not exist yet gets
  an empty version (zero bytes, ``application/octet-stream``), as in ADK. Each restoring
  version carries :data:`REWIND_RESTORES_KEY` in its custom metadata; its number is in the
  event's ``artifact_delta``.
* ``actions.rewind_before_invocation_id`` marks the range the model no longer sees
  (:func:`~adk_temporal.history.without_rewound`, ADK's rule).

``app:`` and ``user:`` state and ``user:`` artifacts are not rewound, as in ADK: they are
shared with the user's other sessions, which may have written them since.

Forking a session as of invocation *X* creates a new session (same app and user) holding
copies of the events up to *X*'s last one, the initial state, and every version up to
then of the artifacts those events saved, under the same version numbers, so the copies'
``artifact_delta`` still name the right versions. The copies keep their ids and their
session-scoped deltas; their ``app:``/``user:`` deltas are dropped, so a fork never writes
the shared scopes back. The original is untouched. ADK has no fork.

Both are idempotent under retry: a rewind by its event id (given, or made once and
returned), a fork by its new session id. Both refuse with
:class:`~adk_temporal.errors.SessionBusyError` while an invocation of the session runs or
waits (``busy``, which the caller knows: the runner its running sessions, ``AdkClient`` the
session's workflow); a fork as of an earlier, finished invocation is allowed then.
Artifacts are found through the events' ``artifact_delta``, as in ADK: a version saved
without an event recording it is not rewound nor copied.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from google.genai import types
from pydantic import BaseModel

from .artifacts import (
    ArtifactService,
    ArtifactVersion,
    GetArtifactVersionRequest,
    LoadRequest,
    SaveRequest,
    VersionsRequest,
)
from .artifacts.requests import USER_SCOPE_PREFIX
from .errors import (
    ArtifactNotFoundError,
    ArtifactServiceNotConfiguredError,
    InvalidSessionRequestError,
    InvocationNotFoundError,
    SessionBusyError,
    SessionExistsError,
    VersionConflictError,
)
from .events import Event, EventActions
from .history import USER_AUTHOR
from .ids import SessionKey, check_session_ids, workflow_id_for
from .sessions import REMOVED_STATE_VALUE, ConversationStore
from .sessions.rules import apply_state_delta
from .state import APP_PREFIX, USER_PREFIX

__all__ = [
    "REWIND_EVENT_KEY",
    "REWIND_RESTORES_KEY",
    "ForkResult",
    "RewindResult",
    "artifact_versions",
    "copy_artifact_version",
    "fork_session",
    "rewind_session",
    "rewind_state_delta",
    "state_before",
]

REWIND_RESTORES_KEY: Final = "rewind-restores"
"""Custom metadata of a version a rewind saved: the version whose content it restores, or
``none`` for an artifact that did not exist before the rewind's point (the empty version)."""

REWIND_EVENT_KEY: Final = "rewind-event"
"""Custom metadata of a version a rewind saved: the id of the rewind event."""

_ABSENT = "none"
_SHARED = (APP_PREFIX, USER_PREFIX)


class RewindResult(BaseModel):
    """What a rewind did: the event it appended and what that event restores."""

    app_name: str
    user_id: str
    session_id: str
    event_id: str
    """The rewind event's id (also its invocation id); pass it again to retry."""
    before_invocation_id: str
    state_delta: dict[str, Any]
    """The keys restored; :data:`~adk_temporal.sessions.REMOVED_STATE_VALUE` for a removal."""
    artifact_delta: dict[str, int]
    """Each artifact restored, with the version that restores it."""
    appended: bool
    """False when a retry found the event stored already (nothing was written)."""


class ForkResult(BaseModel):
    """What a fork made: the new session and what was copied into it."""

    app_name: str
    user_id: str
    session_id: str
    """The new session's id; pass it again to retry."""
    source_session_id: str
    invocation_id: str | None
    """The invocation the fork is as of; ``None``: the whole session."""
    events: int
    """How many events were copied."""
    artifacts: dict[str, list[int]]
    """Each artifact copied, with the versions copied."""


def state_before(initial: Mapping[str, Any], events: Sequence[Event]) -> dict[str, Any]:
    """The session-scoped state after ``events``, starting from the ``initial`` state.

    Deltas apply as the stores apply them (:func:`~adk_temporal.sessions.rules.
    apply_state_delta`); ``app:`` and ``user:`` keys are left out.
    """
    state = dict(initial)
    for event in events:
        apply_state_delta(event.actions.state_delta, app={}, user={}, session=state)
    return state


def rewind_state_delta(
    initial: Mapping[str, Any],
    events: Sequence[Event],
    point: int,
    current: Mapping[str, Any],
) -> dict[str, Any]:
    """The delta that takes the session's keys back to before ``events[point]``.

    Only session keys written at or after ``point`` are considered (nothing else can have
    changed): each gets its value from before, or is removed when it had none.

    Args:
        initial: The session's initial state (:meth:`ConversationStore.get_initial_state`).
        events: The session's events, oldest first.
        point: The index of the first event taken back.
        current: The session's current state.
    """
    before = state_before(initial, events[:point])
    delta: dict[str, Any] = {}
    for event in events[point:]:
        for key in event.actions.state_delta:
            if key.startswith(_SHARED) or key in delta:
                continue
            if key in before:
                if key not in current or current[key] != before[key]:
                    delta[key] = before[key]
            elif key in current:
                delta[key] = dict(REMOVED_STATE_VALUE)
    return delta


def artifact_versions(events: Sequence[Event]) -> dict[str, int]:
    """Each session artifact ``events`` saved, with the latest version they recorded."""
    versions: dict[str, int] = {}
    for event in events:
        for name, version in event.actions.artifact_delta.items():
            if not name.startswith(USER_SCOPE_PREFIX):
                versions[name] = max(version, versions.get(name, 0))
    return versions


def _invocations(events: Sequence[Event]) -> list[str]:
    """The session's invocation ids, in order, each once."""
    return list(dict.fromkeys(e.invocation_id for e in events if e.invocation_id))


def _unknown_invocation(
    key: SessionKey, invocation_id: str, events: Sequence[Event]
) -> InvocationNotFoundError:
    known = _invocations(events)[-10:]
    listed = ", ".join(known) if known else "none yet"
    return InvocationNotFoundError(
        f"session {key} has no invocation {invocation_id!r}; its latest invocations: {listed} "
        "(see them with `adk-temporal events --json`)"
    )


def _busy(key: SessionKey, what: str) -> SessionBusyError:
    return SessionBusyError(
        f"cannot {what} session {key}: its invocation {workflow_id_for(key)!r} is running or "
        f"waiting for an answer; answer or cancel it, or let it end, then {what} again"
    )


# ---------------------------------------------------------------- rewind


async def rewind_session(
    sessions: ConversationStore,
    artifacts: ArtifactService | None,
    key: SessionKey,
    before_invocation_id: str,
    *,
    event_id: str | None = None,
    busy: bool = False,
) -> RewindResult:
    """Rewind ``key`` to before its invocation ``before_invocation_id`` (see the module).

    Args:
        sessions: The session store.
        artifacts: The artifact store; needed only when artifacts changed since the point.
        key: The session.
        before_invocation_id: The first invocation taken back.
        event_id: The rewind event's id; a new ``rewind-…`` id when ``None``. A call with
            the id of a rewind already stored returns it and writes nothing.
        busy: An invocation of the session runs or waits (the caller knows).

    Raises:
        SessionNotFoundError: No such session.
        InvocationNotFoundError: The session has no event of that invocation.
        SessionBusyError: ``busy`` (unless the rewind is stored already).
        InvalidSessionRequestError: ``event_id`` is the id of another kind of event.
        ArtifactServiceNotConfiguredError: Artifacts changed and ``artifacts`` is ``None``.
        ArtifactNotFoundError: A version to restore was deleted since.
    """
    check_session_ids(key)
    event_id = event_id or f"rewind-{uuid.uuid4().hex}"
    session = await sessions.get(key)
    stored = next((e for e in session.events if e.id == event_id), None)
    if stored is not None:
        if stored.actions.rewind_before_invocation_id != before_invocation_id:
            raise InvalidSessionRequestError(
                f"event id {event_id!r} is taken in session {key} by an event that is no "
                f"rewind to before {before_invocation_id!r}; give the rewind another id"
            )
        return _rewound(key, stored, appended=False)
    if busy:
        raise _busy(key, "rewind")
    events = session.events
    point = next((i for i, e in enumerate(events) if e.invocation_id == before_invocation_id), None)
    if point is None:
        raise _unknown_invocation(key, before_invocation_id, events)
    initial = await sessions.get_initial_state(key)
    state_delta = rewind_state_delta(initial, events, point, session.state)
    plan = await _restorations(artifacts, key, events, point)
    artifact_delta = await _restore(artifacts, key, plan, event_id)
    event = Event(
        id=event_id,
        invocation_id=event_id,
        author=USER_AUTHOR,
        actions=EventActions(
            state_delta=state_delta,
            artifact_delta=artifact_delta,
            rewind_before_invocation_id=before_invocation_id,
        ),
    )
    [appended] = await sessions.append_events(key, [event])
    return _rewound(key, appended, appended=True)


def _rewound(key: SessionKey, event: Event, *, appended: bool) -> RewindResult:
    return RewindResult(
        app_name=key.app_name,
        user_id=key.user_id,
        session_id=key.session_id,
        event_id=event.id,
        before_invocation_id=event.actions.rewind_before_invocation_id or "",
        state_delta=event.actions.state_delta,
        artifact_delta=event.actions.artifact_delta,
        appended=appended,
    )


@dataclass(frozen=True)
class _Restoration:
    """One artifact a rewind restores: its earlier content, or the version that has it."""

    name: str
    restores: str
    """The version restored, or ``none``."""
    part: types.Part | None
    """What to save; ``None`` when the latest version restores it already (a retry)."""
    custom_metadata: dict[str, str]
    version: int = 0
    """The version that restores it already, when ``part`` is ``None``."""


def _absent_part() -> types.Part:
    """What an artifact that did not exist yet becomes: empty bytes (ADK's choice)."""
    return types.Part(inline_data=types.Blob(data=b"", mime_type="application/octet-stream"))


async def _latest(artifacts: ArtifactService, key: SessionKey, name: str) -> ArtifactVersion | None:
    try:
        request = GetArtifactVersionRequest.of(key, file_name=name, version=0)
        return (await artifacts.get_artifact_version(request)).artifact_version
    except ArtifactNotFoundError:
        return None


async def _restorations(
    artifacts: ArtifactService | None, key: SessionKey, events: Sequence[Event], point: int
) -> list[_Restoration]:
    """What to restore, read before anything is written (a missing version fails first)."""
    changed = artifact_versions(events[point:])
    if not changed:
        return []
    if artifacts is None:
        raise ArtifactServiceNotConfiguredError(
            f"cannot rewind session {key}: artifacts {', '.join(sorted(changed))} changed "
            "since that invocation and no artifact service was given to restore them"
        )
    before = artifact_versions(events[:point])
    plan: list[_Restoration] = []
    for name in changed:
        target = before.get(name)
        restores = str(target) if target is not None else _ABSENT
        latest = await _latest(artifacts, key, name)
        if latest is not None and latest.version == target:
            continue
        if latest is not None and latest.custom_metadata.get(REWIND_RESTORES_KEY) == restores:
            # Restored already (a retried rewind, or one to the same point): record it.
            plan.append(_Restoration(name, restores, None, {}, latest.version))
            continue
        if target is None:
            plan.append(_Restoration(name, restores, _absent_part(), {}))
            continue
        request = LoadRequest.of(key, file_name=name, version=target)
        part = (await artifacts.load(request)).part
        described = await artifacts.get_artifact_version(
            GetArtifactVersionRequest.of(key, file_name=name, version=target)
        )
        metadata = dict(described.artifact_version.custom_metadata)
        plan.append(_Restoration(name, restores, part, metadata))
    return plan


async def _restore(
    artifacts: ArtifactService | None,
    key: SessionKey,
    plan: Sequence[_Restoration],
    event_id: str,
) -> dict[str, int]:
    """Save each restoration as a new version; the versions, by name."""
    delta: dict[str, int] = {}
    for item in plan:
        if item.part is None or artifacts is None:
            delta[item.name] = item.version
            continue
        saved = await artifacts.save(
            SaveRequest.of(
                key,
                file_name=item.name,
                part=item.part,
                custom_metadata={
                    **item.custom_metadata,
                    REWIND_RESTORES_KEY: item.restores,
                    REWIND_EVENT_KEY: event_id,
                },
                # A retry of this rewind finds the version its first attempt saved.
                idempotency_key=f"{event_id}/{item.name}",
            )
        )
        delta[item.name] = saved.version
    return delta


# ---------------------------------------------------------------- fork


async def fork_session(
    sessions: ConversationStore,
    artifacts: ArtifactService | None,
    key: SessionKey,
    invocation_id: str | None = None,
    *,
    new_session_id: str | None = None,
    busy: bool = False,
) -> ForkResult:
    """Copy ``key`` as of its invocation ``invocation_id`` into a new session (see the module).

    Args:
        sessions: The session store.
        artifacts: The artifact store; needed only when the copied events saved artifacts.
        key: The session to fork; never changed.
        invocation_id: The last invocation copied; ``None`` copies every event.
        new_session_id: The new session's id; a new ``s-…`` id when ``None``. A call for a
            fork stored already (even in part) completes it and writes nothing twice.
        busy: An invocation of the session runs or waits (the caller knows).

    Raises:
        SessionNotFoundError: No such session.
        InvocationNotFoundError: The session has no event of that invocation.
        SessionBusyError: ``busy`` and the fork would copy the running invocation.
        SessionExistsError: ``new_session_id`` is taken by another session.
        InvalidSessionRequestError: ``new_session_id`` is the session's own id.
        ArtifactServiceNotConfiguredError: The events saved artifacts and ``artifacts`` is
            ``None``.
    """
    target = SessionKey(key.app_name, key.user_id, new_session_id or f"s-{uuid.uuid4().hex[:12]}")
    check_session_ids(key)
    check_session_ids(target)
    if target == key:
        raise InvalidSessionRequestError(
            f"cannot fork session {key} into itself; give another new session id"
        )
    events = (await sessions.get(key)).events
    end = len(events)
    if invocation_id is not None:
        found = [i for i, e in enumerate(events) if e.invocation_id == invocation_id]
        if not found:
            raise _unknown_invocation(key, invocation_id, events)
        end = found[-1] + 1
    if busy and events and (invocation_id is None or end == len(events)):
        raise _busy(key, "fork")
    copies = [_copy(event) for event in events[:end]]
    initial = await sessions.get_initial_state(key)
    await _open_fork(sessions, target, initial, copies)
    copied = await _copy_artifacts(artifacts, key, target, copies)
    await sessions.append_events(target, copies)
    return ForkResult(
        app_name=target.app_name,
        user_id=target.user_id,
        session_id=target.session_id,
        source_session_id=key.session_id,
        invocation_id=invocation_id,
        events=len(copies),
        artifacts=copied,
    )


def _copy(event: Event) -> Event:
    """The event as the fork stores it: its ``app:``/``user:`` deltas left out."""
    delta = event.actions.state_delta
    if not any(k.startswith(_SHARED) for k in delta):
        return event
    copy = event.model_copy(deep=True)
    copy.actions.state_delta = {k: v for k, v in delta.items() if not k.startswith(_SHARED)}
    return copy


async def _open_fork(
    sessions: ConversationStore,
    target: SessionKey,
    initial: Mapping[str, Any],
    copies: Sequence[Event],
) -> None:
    """Create the new session, or find the one an earlier attempt of this fork created."""
    try:
        await sessions.create(target, state=initial)
        return
    except SessionExistsError:
        existing = (await sessions.get(target)).events
    ids = [e.id for e in existing]
    same_start = ids == [e.id for e in copies[: len(ids)]]
    if not same_start or await sessions.get_initial_state(target) != initial:
        raise SessionExistsError(
            f"cannot fork into session {target}: it exists and is no earlier attempt of "
            "this fork; give another new session id"
        )


async def _copy_artifacts(
    artifacts: ArtifactService | None,
    source: SessionKey,
    target: SessionKey,
    copies: Sequence[Event],
) -> dict[str, list[int]]:
    """Copy every version up to the fork's point of each artifact the copies saved."""
    latest = artifact_versions(copies)
    if not latest:
        return {}
    if artifacts is None:
        raise ArtifactServiceNotConfiguredError(
            f"cannot fork session {source}: its events saved artifacts "
            f"{', '.join(sorted(latest))} and no artifact service was given to copy them"
        )
    copied: dict[str, list[int]] = {}
    for name, last in latest.items():
        try:
            listed = await artifacts.versions(VersionsRequest.of(source, file_name=name))
        except ArtifactNotFoundError:
            continue  # deleted since: nothing to copy
        copied[name] = [v for v in listed.versions if v <= last]
        for version in copied[name]:
            await copy_artifact_version(artifacts, source, artifacts, target, name, version)
    return copied


async def copy_artifact_version(
    store: ArtifactService,
    source: SessionKey,
    into: ArtifactService,
    target: SessionKey,
    name: str,
    version: int,
) -> None:
    """Save version ``version`` of ``name`` in ``target`` of ``into`` exactly as ``source``
    of ``store`` holds it (content, number and custom metadata); ``store`` is only read."""
    part = (await store.load(LoadRequest.of(source, file_name=name, version=version))).part
    described = await store.get_artifact_version(
        GetArtifactVersionRequest.of(source, file_name=name, version=version)
    )
    request = SaveRequest.of(
        target,
        file_name=name,
        part=part,
        version=version,
        custom_metadata=dict(described.artifact_version.custom_metadata),
    )
    # A conflict: an earlier attempt of this copy saved it (the target session is ours alone).
    with contextlib.suppress(VersionConflictError):
        await into.save(request)
