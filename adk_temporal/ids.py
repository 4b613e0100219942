"""How a session is named across engines: the workflow id of its invocations."""

from __future__ import annotations

__all__ = ["workflow_id_for"]


def workflow_id_for(app_name: str, user_id: str, session_id: str) -> str:
    """The workflow id of a session's invocations: ``adk/{app}/{user_id}/{session_id}``."""
    return f"adk/{app_name}/{user_id}/{session_id}"
