"""The one grammar of app, user and session ids, and the workflow id they make.

Every entry point checks ids with it before doing anything — the client and the runner
before a workflow starts, every session store and every artifact store before touching
storage — so an id accepted anywhere works everywhere, and distinct ``(app, user, session)``
triples never share a workflow id ``adk/{app}/{user}/{session}``.

An id is non-empty, at most :data:`MAX_ID_BYTES` bytes of UTF-8, contains no ``/``, ``\\``,
NUL or other control or format character (a newline would forge log lines and break the
commands the CLI prints; a bidirectional override would make an id read as another), does
not start with a drive prefix (``C:``), and is not ``.`` or ``..``; a session id is not
``user`` (that name stands for the user scope in artifact stores). An artifact
file name follows the same rules but may be up to :data:`MAX_FILE_NAME_BYTES` bytes, the
usual file-system limit of one path component.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from typing import NamedTuple

from .errors import InvalidIdError

__all__ = [
    "ANY_APP",
    "DEFAULT_TASK_QUEUE",
    "DRIVE_PREFIX",
    "MAX_FILE_NAME_BYTES",
    "MAX_ID_BYTES",
    "USER_SCOPE",
    "SessionKey",
    "any_app_task_queue",
    "app_queues_prefix",
    "app_task_queue",
    "base_task_queue",
    "check_session_ids",
    "hidden_character_problem",
    "id_problem",
    "queue_owner",
    "session_key_of",
    "size_problem",
    "workflow_id_for",
]

DEFAULT_TASK_QUEUE = "adk-temporal"
"""The task queue workers listen on and invocations start on unless told otherwise."""


def app_task_queue(task_queue: str, app_name: str) -> str:
    """The queue of ``app_name``'s own steps beside ``task_queue``, polled only by its workers.

    Workers of several apps may share a task queue; a run whose step reached another app's
    worker moves its steps here, where no other app's worker can take them.
    """
    return app_queues_prefix(task_queue) + app_name


def any_app_task_queue(task_queue: str) -> str:
    """The queue beside ``task_queue`` polled only by workers of unnamed apps, which serve
    every app: where a run's steps go when workers of named apps share ``task_queue`` and
    none of them serves the run's app."""
    return f"{task_queue}/{ANY_APP}"


ANY_APP = "any-app"
"""The last segment of :func:`any_app_task_queue`'s names."""


def queue_owner(task_queue: str) -> str | None:
    """The app whose own queue ``task_queue`` is (``…/apps/<app>``), or ``None``."""
    base, mark, app = task_queue.rpartition("/apps/")
    return app if mark and base and app and id_problem("app_name", app) is None else None


def app_queues_prefix(task_queue: str) -> str:
    """What the name of every app's own queue beside ``task_queue`` starts with."""
    return f"{task_queue}/apps/"


def base_task_queue(task_queue: str, app_name: str) -> str:
    """The queue ``task_queue`` is beside: itself, unless it is ``app_name``'s own queue
    (a run the client started there, where a worker of the app polls)."""
    suffix = f"/apps/{app_name}"
    if app_name and task_queue.endswith(suffix) and len(task_queue) > len(suffix):
        return task_queue.removesuffix(suffix)
    return task_queue


MAX_ID_BYTES = 128
"""The longest app, user or session id, in bytes of UTF-8."""

MAX_FILE_NAME_BYTES = 255
"""The longest artifact file name, in bytes of UTF-8 (one file-system path component)."""

DRIVE_PREFIX = re.compile(r"[A-Za-z]:")
"""A Windows drive prefix (``C:``): ``Path(root) / "C:x"`` drops ``root`` on Windows."""

USER_SCOPE = "user"
"""The storage segment standing for the user scope; no session may be called this."""


class SessionKey(NamedTuple):
    """A session's identity: the app, the user and the session id, in that order.

    The same session id under another user or app is another session. Being a tuple, a key
    is hashable and unpacks as ``app_name, user_id, session_id``; it is not checked when
    built — every store and entry point checks it (:func:`check_session_ids`) before use.
    """

    app_name: str
    user_id: str
    session_id: str

    @classmethod
    def fresh(cls, app_name: str, user_id: str) -> SessionKey:
        """A key for a new session of ``user_id`` with a random (UUID4 hex) session id."""
        return cls(app_name, user_id, uuid.uuid4().hex)

    def __str__(self) -> str:
        """``app/user/session``, as messages name a session."""
        return f"{self.app_name}/{self.user_id}/{self.session_id}"


def size_problem(field: str, value: str, limit: int) -> str | None:
    """Why ``value`` is too long for ``field`` (more than ``limit`` bytes of UTF-8), or ``None``."""
    size = len(value.encode())
    if size > limit:
        return f"{field} is {size} bytes long; the limit is {limit} ({field}={value[:40]!r}…)"
    return None


_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories no id may contain: controls, format characters (bidirectional
overrides, zero-width ones), surrogates, line and paragraph separators."""


def hidden_character_problem(field: str, value: str) -> str | None:
    """Why ``value`` may not stand in ``field`` for a control or format character it holds,
    or ``None``; the rule ids and artifact file names share."""
    hidden = next((c for c in value if unicodedata.category(c) in _INVISIBLE), None)
    if hidden is None:
        return None
    return (
        f"{field} cannot contain control or format characters such as U+{ord(hidden):04X} "
        f"({field}={value!r})"
    )


def id_problem(field: str, value: str) -> str | None:
    """Why ``value`` is not a valid ``app_name``, ``user_id`` or ``session_id``, or ``None``.

    An empty value is reported as missing by the callers, which list every missing field.
    """
    if any(sep in value for sep in ("/", "\\")) or "\0" in value:
        return f"{field} cannot contain path separators or NUL ({field}={value!r})"
    problem = hidden_character_problem(field, value)
    if problem is not None:
        return problem
    if value in (".", ".."):
        return f"{field} cannot be '.' or '..' ({field}={value!r})"
    if DRIVE_PREFIX.match(value):
        return f"{field} cannot start with a drive prefix like 'C:' ({field}={value!r})"
    if field == "session_id" and value == USER_SCOPE:
        return (
            f"session_id cannot be {USER_SCOPE!r}: it would alias the user scope; "
            "use a 'user:' file name to share an artifact across sessions"
        )
    return size_problem(field, value, MAX_ID_BYTES)


def check_session_ids(key: SessionKey) -> None:
    """Refuse a session identity that breaks the grammar, naming every missing field first.

    Raises:
        InvalidIdError: A field is empty, or the first field that breaks a rule.
    """
    fields = key._asdict()
    missing = [name for name, value in fields.items() if not value]
    if missing:
        raise InvalidIdError(f"invalid ids: missing required fields: {', '.join(missing)}")
    for name, value in fields.items():
        problem = id_problem(name, value)
        if problem is not None:
            raise InvalidIdError(f"invalid ids: {problem}")


def workflow_id_for(key: SessionKey) -> str:
    """The workflow id of a session's invocations: ``adk/{app}/{user_id}/{session_id}``.

    It is also the namespace of the idempotency keys of the session's steps, on every
    engine, so a step keys its saves the same in-process as on Temporal.

    Raises:
        InvalidIdError: An id breaks the grammar (which is what keeps the id unambiguous).
    """
    check_session_ids(key)
    return f"adk/{key}"


def session_key_of(workflow_id: str) -> SessionKey | None:
    """The session a workflow id ``adk/{app}/{user}/{session}`` names, or ``None``."""
    parts = workflow_id.split("/", 3)
    if len(parts) != 4 or parts[0] != "adk":
        return None
    return SessionKey(parts[1], parts[2], parts[3])
