"""The one grammar of app, user and session ids, and the workflow id they make.

Every entry point checks ids with it before doing anything — the client and the runner
before a workflow starts, every session store and every artifact store before touching
storage — so an id accepted anywhere works everywhere, and distinct ``(app, user, session)``
triples never share a workflow id ``adk/{app}/{user}/{session}``.

An id is non-empty, at most :data:`MAX_ID_BYTES` bytes of UTF-8, contains no ``/``, ``\\``
or NUL, does not start with a drive prefix (``C:``), and is not ``.`` or ``..``; a session
id is not ``user`` (that name stands for the user scope in artifact stores). An artifact
file name follows the same rules but may be up to :data:`MAX_FILE_NAME_BYTES` bytes, the
usual file-system limit of one path component.
"""

from __future__ import annotations

import re

from .errors import InvalidIdError

__all__ = [
    "DEFAULT_TASK_QUEUE",
    "DRIVE_PREFIX",
    "MAX_FILE_NAME_BYTES",
    "MAX_ID_BYTES",
    "USER_SCOPE",
    "check_session_ids",
    "id_problem",
    "size_problem",
    "workflow_id_for",
]

DEFAULT_TASK_QUEUE = "adk-temporal"
"""The task queue workers listen on and invocations start on unless told otherwise."""

MAX_ID_BYTES = 128
"""The longest app, user or session id, in bytes of UTF-8."""

MAX_FILE_NAME_BYTES = 255
"""The longest artifact file name, in bytes of UTF-8 (one file-system path component)."""

DRIVE_PREFIX = re.compile(r"[A-Za-z]:")
"""A Windows drive prefix (``C:``): ``Path(root) / "C:x"`` drops ``root`` on Windows."""

USER_SCOPE = "user"
"""The storage segment standing for the user scope; no session may be called this."""


def size_problem(field: str, value: str, limit: int) -> str | None:
    """Why ``value`` is too long for ``field`` (more than ``limit`` bytes of UTF-8), or ``None``."""
    size = len(value.encode())
    if size > limit:
        return f"{field} is {size} bytes long; the limit is {limit} ({field}={value[:40]!r}…)"
    return None


def id_problem(field: str, value: str) -> str | None:
    """Why ``value`` is not a valid ``app_name``, ``user_id`` or ``session_id``, or ``None``.

    An empty value is reported as missing by the callers, which list every missing field.
    """
    if any(sep in value for sep in ("/", "\\")) or "\0" in value:
        return f"{field} cannot contain path separators or NUL ({field}={value!r})"
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


def check_session_ids(app_name: str, user_id: str, session_id: str) -> None:
    """Refuse a session identity that breaks the grammar, naming every missing field first.

    Raises:
        InvalidIdError: A field is empty, or the first field that breaks a rule.
    """
    fields = {"app_name": app_name, "user_id": user_id, "session_id": session_id}
    missing = [name for name, value in fields.items() if not value]
    if missing:
        raise InvalidIdError(f"invalid ids: missing required fields: {', '.join(missing)}")
    for name, value in fields.items():
        problem = id_problem(name, value)
        if problem is not None:
            raise InvalidIdError(f"invalid ids: {problem}")


def workflow_id_for(app_name: str, user_id: str, session_id: str) -> str:
    """The workflow id of a session's invocations: ``adk/{app}/{user_id}/{session_id}``.

    Raises:
        InvalidIdError: An id breaks the grammar (which is what keeps the id unambiguous).
    """
    check_session_ids(app_name, user_id, session_id)
    return f"adk/{app_name}/{user_id}/{session_id}"
