"""``SessionRef``: where a step finds its work, every id resolved."""

from __future__ import annotations

from dataclasses import dataclass

from ..flow.messages import InvocationRef
from ..ids import SessionKey, session_key_of

__all__ = ["SessionRef"]


@dataclass(frozen=True, slots=True)
class SessionRef:
    """A step's session, agent and invocation, with the namespace of its idempotency keys."""

    key: SessionKey
    agent_name: str
    invocation_id: str
    workflow_id: str
    """The invocation's workflow id on Temporal (in-process: the one it would have there,
    :func:`~adk_temporal.ids.workflow_id_for`); it keys the step's idempotent writes."""
    branch: str = ""
    isolation_scope: str = ""
    node_path: str = ""
    """The graph node run the step's events belong to (``InvocationRef.node_path``)."""

    @classmethod
    def resolve(cls, ref: InvocationRef, workflow_id: str) -> SessionRef:
        """``ref`` with the session ids it leaves out read back from ``workflow_id``.

        Raises:
            ValueError: The ids are missing and ``workflow_id`` does not spell them.
        """
        if ref.app_name and ref.user_id and ref.session_id:
            key: SessionKey | None = SessionKey(ref.app_name, ref.user_id, ref.session_id)
        else:
            key = session_key_of(workflow_id)
        if key is None:
            raise ValueError(f"workflow id {workflow_id!r} does not name a session")
        return cls(
            key=key,
            agent_name=ref.agent_name,
            invocation_id=ref.invocation_id,
            workflow_id=workflow_id,
            branch=ref.branch,
            isolation_scope=ref.isolation_scope,
            node_path=ref.node_path,
        )
