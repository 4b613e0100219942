"""The context family: what agents, callbacks and tools can see and do during an invocation.

* :class:`InvocationContext` — the invocation's environment (session, agent, ids, branch,
  isolation scope, services, run config, resume inputs) and its end flag.
* :class:`ReadonlyContext` — identity plus a live, read-only view of the state.
* :class:`CallbackContext` — adds delta-recording ``state``, ``actions`` and tracked
  ``artifacts``; it cannot confirm, search memory, request input or end the invocation, and
  says so with ``NotImplementedError`` instead of silently doing nothing.
* :class:`ToolContext` — a callback context for one function call: ``function_call_id``,
  confirmation, resume inputs, memory search and an ``idempotency_key``.

Every kind derives with :meth:`ReadonlyContext.with_delta` into a context of the same kind
that shares the parent's ``actions`` and session: a derived context is a different view of
the same invocation, not a new session, delta map or transaction.
"""

from __future__ import annotations

import copy
import enum
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Final, Protocol, Self

from google.genai import types

from .errors import MemoryServiceNotConfiguredError
from .events import EventActions, InputRequest, ToolConfirmation
from .memory import MemoryService, SearchMemoryResponse
from .resume import Resumed, check_input_schema, default_interrupt_id
from .run_config import RunConfig
from .sessions.session import Session
from .state import ReadonlyState, State
from .tools import EffectReceipt

if TYPE_CHECKING:
    from .artifacts.facade import ArtifactsFacade
    from .artifacts.service import ArtifactService

__all__ = [
    "UNSET",
    "AgentLike",
    "CallbackContext",
    "ContextDelta",
    "InvocationContext",
    "ReadonlyContext",
    "RunConfig",
    "ToolContext",
    "UnsetType",
]


def _seconds(timeout: timedelta | float | None) -> float | None:
    """A timeout in seconds; refuses one that is not positive."""
    if timeout is None:
        return None
    seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
    if seconds <= 0:
        raise ValueError(f"timeout must be positive, got {timeout!r}")
    return seconds


class UnsetType(enum.Enum):
    """The type of :data:`UNSET`; a one-member enum so ``is UNSET`` narrows types."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = UnsetType.UNSET
"""Marks a :class:`ContextDelta` field as "leave unchanged"; ``None`` and ``""`` are values."""


class AgentLike(Protocol):
    """What a context needs from an agent: its name."""

    @property
    def name(self) -> str:
        """The agent's name, unique within the app."""
        ...


@dataclass(frozen=True, kw_only=True)
class ContextDelta:
    """The fields a derived context replaces; each :data:`UNSET` field is left unchanged.

    Any other value replaces the field, including ``None`` and ``""``: ``branch=""`` clears
    the branch and ``user_content=None`` clears the user content.
    """

    user_content: types.Content | UnsetType | None = UNSET
    branch: str | UnsetType = UNSET
    isolation_scope: str | UnsetType = UNSET
    agent: AgentLike | UnsetType = UNSET
    resume_inputs: Mapping[str, Any] | UnsetType | None = UNSET


@dataclass
class _EndFlag:
    """Shared by an invocation context and every context derived from it."""

    ended: bool = False


class InvocationContext:
    """The environment of one invocation: who runs, on which session, with which services.

    Args:
        session: The session the invocation reads and appends to.
        agent: The agent being run.
        invocation_id: The invocation id; ``None`` generates ``e-<uuid4>``, an explicit id
            is kept as is (the workflow passes its own so replays agree).
        branch: Dot-separated branch of the agent in the agent tree (``""`` for the root).
        isolation_scope: The history scope the agent sees (``""`` for unscoped).
        user_content: The user message that started the invocation.
        run_config: Limits for the invocation; ``None`` means the defaults.
        artifact_service: Where ``ctx.artifacts`` saves; ``None`` makes ``ctx.artifacts``
            ``None``.
        memory_service: What ``search_memory`` searches; ``None`` makes it raise.
        resume_inputs: Answers to input requests, by interrupt id.
        expired_inputs: Interrupt ids whose requests expired unanswered.
        workflow_id: The id of the workflow running the invocation (part of idempotency
            keys); ``""`` outside Temporal.
    """

    def __init__(
        self,
        *,
        session: Session,
        agent: AgentLike,
        invocation_id: str | None = None,
        branch: str = "",
        isolation_scope: str = "",
        user_content: types.Content | None = None,
        run_config: RunConfig | None = None,
        artifact_service: ArtifactService | None = None,
        memory_service: MemoryService | None = None,
        resume_inputs: Mapping[str, Any] | None = None,
        expired_inputs: Iterable[str] = (),
        workflow_id: str = "",
    ) -> None:
        self._session = session
        self._agent = agent
        self._invocation_id = f"e-{uuid.uuid4()}" if invocation_id is None else invocation_id
        self._branch = branch
        self._isolation_scope = isolation_scope
        self._user_content = user_content
        self._run_config = run_config or RunConfig()
        self._artifact_service = artifact_service
        self._memory_service = memory_service
        self._resume_inputs: Mapping[str, Any] = MappingProxyType(dict(resume_inputs or {}))
        self._expired_inputs = frozenset(expired_inputs)
        self._workflow_id = workflow_id
        self._end = _EndFlag()

    @property
    def session(self) -> Session:
        """The session the invocation runs on."""
        return self._session

    @property
    def agent(self) -> AgentLike:
        """The agent being run."""
        return self._agent

    @property
    def invocation_id(self) -> str:
        """The invocation id (``e-<uuid>`` unless one was given)."""
        return self._invocation_id

    @property
    def branch(self) -> str:
        """The agent's branch (``""`` for the root)."""
        return self._branch

    @property
    def isolation_scope(self) -> str:
        """The history scope the agent sees (``""`` for unscoped)."""
        return self._isolation_scope

    @property
    def user_content(self) -> types.Content | None:
        """The user message that started the invocation."""
        return self._user_content

    @property
    def run_config(self) -> RunConfig:
        """The invocation's limits."""
        return self._run_config

    @property
    def artifact_service(self) -> ArtifactService | None:
        """The artifact service, or ``None`` when none is configured."""
        return self._artifact_service

    @property
    def memory_service(self) -> MemoryService | None:
        """The memory service, or ``None`` when none is configured."""
        return self._memory_service

    @property
    def resume_inputs(self) -> Mapping[str, Any]:
        """A read-only view of the answers to input requests, by interrupt id."""
        return self._resume_inputs

    @property
    def expired_inputs(self) -> frozenset[str]:
        """The interrupt ids whose input requests expired unanswered."""
        return self._expired_inputs

    @property
    def workflow_id(self) -> str:
        """The id of the workflow running the invocation (``""`` outside Temporal)."""
        return self._workflow_id

    @property
    def ended(self) -> bool:
        """True once :meth:`end_invocation` was called on this or a related context."""
        return self._end.ended

    def end_invocation(self) -> None:
        """Ask the flow to stop: it makes no further model call. Nothing is cancelled.

        Contexts derived with :meth:`with_delta` share the flag, so ending a sub-agent's
        context ends the invocation it belongs to.
        """
        self._end.ended = True

    def resumed_input(self, interrupt_id: str) -> Resumed | None:
        """The answer to an input request.

        Args:
            interrupt_id: The id ``request_input`` returned.

        Returns:
            ``Resumed(value=...)`` when answered (``value`` may be ``None``), ``None`` when
            the interrupt was never answered.
        """
        if interrupt_id not in self._resume_inputs:
            return None
        return Resumed(value=self._resume_inputs[interrupt_id])

    def with_delta(self, delta: ContextDelta | None) -> InvocationContext:
        """A context with the delta's fields replaced (see :class:`ContextDelta`).

        Args:
            delta: The fields to replace; ``None`` changes nothing.

        Returns:
            ``self`` for ``None``; otherwise a new context sharing the session, services,
            invocation id and end flag.
        """
        if delta is None:
            return self
        derived = copy.copy(self)
        if delta.user_content is not UNSET:
            derived._user_content = delta.user_content
        if delta.branch is not UNSET:
            derived._branch = delta.branch
        if delta.isolation_scope is not UNSET:
            derived._isolation_scope = delta.isolation_scope
        if delta.agent is not UNSET:
            derived._agent = delta.agent
        if delta.resume_inputs is not UNSET:
            derived._resume_inputs = MappingProxyType(dict(delta.resume_inputs or {}))
        return derived


class ReadonlyContext:
    """Identity of the invocation and a live, read-only view of its state.

    Args:
        invocation_context: The invocation this context looks at.
    """

    def __init__(self, invocation_context: InvocationContext) -> None:
        self._invocation_context = invocation_context

    @property
    def user_content(self) -> types.Content | None:
        """The user message that started the invocation."""
        return self._invocation_context.user_content

    @property
    def invocation_id(self) -> str:
        """The invocation id."""
        return self._invocation_context.invocation_id

    @property
    def agent_name(self) -> str:
        """The name of the agent being run."""
        return self._invocation_context.agent.name

    @property
    def state(self) -> Mapping[str, Any]:
        """A live :class:`~adk_temporal.state.ReadonlyState` view: it sees later writes."""
        return ReadonlyState(self._invocation_context.session.state)

    @property
    def run_config(self) -> RunConfig:
        """The invocation's limits and switches, as it was started with them (ADK-Go
        ``Context.RunConfig``)."""
        return self._invocation_context.run_config

    @property
    def user_id(self) -> str:
        """The session's user id."""
        return self._invocation_context.session.user_id

    @property
    def app_name(self) -> str:
        """The session's app name."""
        return self._invocation_context.session.app_name

    @property
    def session_id(self) -> str:
        """The session id."""
        return self._invocation_context.session.id

    @property
    def branch(self) -> str:
        """The agent's branch."""
        return self._invocation_context.branch

    def with_delta(self, delta: ContextDelta | None) -> Self:
        """A context of the same kind over the invocation context derived with ``delta``.

        Args:
            delta: The fields to replace; ``None`` changes nothing.

        Returns:
            ``self`` for ``None``; otherwise a new context of this class that shares this
            one's actions, session and (for tools) function-call id and confirmation.
        """
        if delta is None:
            return self
        derived = copy.copy(self)
        derived._invocation_context = self._invocation_context.with_delta(delta)
        return derived


@dataclass
class _CallState:
    """Per-call bookkeeping shared by a tracked context and the contexts derived from it."""

    facade: ArtifactsFacade | None = None
    default_inputs_requested: int = 0


class CallbackContext(ReadonlyContext):
    """The context of an agent or model callback: writable state, actions, artifacts.

    Args:
        invocation_context: The invocation the callback runs in.
        actions: Where writes are recorded; ``None`` starts empty actions.
        idempotency_key: The base of the idempotency keys of artifact saves; ``None`` means
            ``{workflow_id}/{invocation_id}/callback``. A runtime that runs callbacks in
            several steps passes a key per step and callback, so a save in step 2 is not
            mistaken for the retry of a save of the same name in step 1.
    """

    _kind: ClassVar[str] = "callback"

    def __init__(
        self,
        invocation_context: InvocationContext,
        actions: EventActions | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> None:
        super().__init__(invocation_context)
        self._actions = EventActions() if actions is None else actions
        self._call = _CallState()
        self._idempotency_key = idempotency_key

    @property
    def actions(self) -> EventActions:
        """The actions this context records into (shared with derived contexts)."""
        return self._actions

    @property
    def state(self) -> State:
        """The session state; assignment records ``actions.state_delta[key]`` too."""
        return State(self._invocation_context.session.state, self._actions.state_delta)

    @property
    def ended(self) -> bool:
        """True once the invocation was ended (read-only here)."""
        return self._invocation_context.ended

    @property
    def _idempotency_base(self) -> str:
        if self._idempotency_key is not None:
            return self._idempotency_key
        ic = self._invocation_context
        return f"{ic.workflow_id}/{ic.invocation_id}/callback"

    @property
    def artifacts(self) -> ArtifactsFacade | None:
        """Tracked artifacts of the session, or ``None`` when no artifact service is set.

        A save records ``actions.artifact_delta[name] = version``.
        """
        service = self._invocation_context.artifact_service
        if service is None:
            return None
        if self._call.facade is None:
            # Imported on first use: the artifacts package loads every backend (GCS client
            # included), which an invocation without an artifact service never needs.
            from .artifacts.facade import ArtifactsFacade

            self._call.facade = ArtifactsFacade(
                service,
                self._invocation_context.session.key,
                actions=self._actions,
                idempotency_key=self._idempotency_base,
            )
        return self._call.facade

    def _unsupported(self, name: str) -> NotImplementedError:
        return NotImplementedError(f"{name} is not supported for {self._kind} context")

    def end_invocation(self) -> None:
        """Not available: set ``ctx.actions.end_invocation = True`` instead.

        Raises:
            NotImplementedError: Always; the flow ends the invocation after the step.
        """
        raise NotImplementedError(
            f"end_invocation is not supported for {self._kind} context; "
            "set ctx.actions.end_invocation = True instead"
        )

    @property
    def function_call_id(self) -> str:
        """Not available in a callback context.

        Raises:
            NotImplementedError: Always.
        """
        raise self._unsupported("function_call_id")

    @property
    def tool_confirmation(self) -> ToolConfirmation | None:
        """Not available in a callback context.

        Raises:
            NotImplementedError: Always.
        """
        raise self._unsupported("tool_confirmation")

    def request_confirmation(self, hint: str = "", payload: Any = None) -> None:
        """Not available in a callback context.

        Raises:
            NotImplementedError: Always.
        """
        raise self._unsupported("request_confirmation")

    def request_input(
        self, message: str, schema: dict[str, Any] | None = None, interrupt_id: str | None = None
    ) -> str:
        """Not available in a callback context.

        Raises:
            NotImplementedError: Always.
        """
        raise self._unsupported("request_input")

    async def search_memory(self, query: str) -> SearchMemoryResponse:
        """Not available in a callback context.

        Raises:
            NotImplementedError: Always.
        """
        raise self._unsupported("search_memory")


class EffectNotes(Protocol):
    """What a tool with external effects writes its notes through: its call's receipt."""

    receipt: EffectReceipt

    async def note(self, details: dict[str, Any]) -> None:
        """Keep ``details`` in the receipt at once, durably."""
        ...


class ToolContext(CallbackContext):
    """The context of one tool call.

    Args:
        invocation_context: The invocation the tool runs in.
        function_call_id: The model's call id; ``None`` or ``""`` generates a UUID.
        actions: Where writes and requests are recorded; ``None`` starts empty actions.
        tool_confirmation: The user's decision when the call is re-dispatched after a
            confirmation request; ``None`` on a first run.
        effect: The call's receipt, for a tool declared ``effects="external"`` (or the
            receipt of the call a compensating tool undoes); ``None`` otherwise.
    """

    _kind: ClassVar[str] = "tool"

    def __init__(
        self,
        invocation_context: InvocationContext,
        function_call_id: str | None = None,
        actions: EventActions | None = None,
        tool_confirmation: ToolConfirmation | None = None,
        effect: EffectNotes | None = None,
    ) -> None:
        super().__init__(invocation_context, actions)
        self._function_call_id = function_call_id or str(uuid.uuid4())
        self._tool_confirmation = tool_confirmation
        self.effect = effect

    @property
    def effect_receipt(self) -> EffectReceipt | None:
        """The receipt of this call (a tool declared ``effects="external"``) — or, in a
        compensating tool, of the call it undoes; ``None`` for other tools."""
        return self.effect.receipt if self.effect is not None else None

    async def note_effect(self, **details: Any) -> None:
        """Write ``details`` into this call's receipt at once (a provider's request id, a
        charge's reference): an operator resolving the call, if its worker is lost, reads
        them.

        Raises:
            ValueError: The tool is not declared ``effects="external"``.
        """
        if self.effect is None:
            raise ValueError(
                "note_effect is for tools declared effects='external' (and their compensators)"
            )
        await self.effect.note(details)

    @property
    def function_call_id(self) -> str:
        """The id of this call; never empty."""
        return self._function_call_id

    @property
    def tool_confirmation(self) -> ToolConfirmation | None:
        """The user's decision about this call, or ``None`` when none was given yet."""
        return self._tool_confirmation

    @property
    def idempotency_key(self) -> str:
        """``{workflow_id}/{invocation_id}/{function_call_id}``: stable across retries.

        It is the same for every activity retry and every re-entry of this call, so a tool
        can pass it to an external API (a payment, an email) that must act at most once.
        """
        ic = self._invocation_context
        return f"{ic.workflow_id}/{ic.invocation_id}/{self._function_call_id}"

    @property
    def _idempotency_base(self) -> str:
        return self.idempotency_key

    def request_confirmation(
        self, hint: str = "", payload: Any = None, *, timeout: timedelta | float | None = None
    ) -> None:
        """Ask a human to approve this call; returns at once.

        The tool should then return a "waiting" result without performing its side effect;
        once answered, the call is re-dispatched with the same id and
        :attr:`tool_confirmation` set.

        Args:
            hint: What the human is asked.
            payload: Data the human may inspect and return changed.
            timeout: How long to wait (a ``timedelta`` or seconds; the app's default when
                ``None``). On expiry the call re-enters rejected: ``confirmed=False`` and
                ``expired=True``.
        """
        self._actions.requested_tool_confirmations[self._function_call_id] = ToolConfirmation(
            hint=hint, confirmed=False, payload=payload, timeout_seconds=_seconds(timeout)
        )
        self._actions.skip_summarization = True

    def request_input(
        self,
        message: str,
        schema: dict[str, Any] | None = None,
        interrupt_id: str | None = None,
        *,
        timeout: timedelta | float | None = None,
    ) -> str:
        """Ask a human for a value; returns the interrupt id at once.

        Without ``interrupt_id`` the id is ``"<function_call_id>/input-<n>"``, ``n`` counting
        this call's requests without an explicit id from 1, so a re-entered handler making
        the same requests gets the same ids. A request whose interrupt was already answered
        — or expired — records nothing: re-opening it would pause the invocation on a closed
        question. Its answer is available from :meth:`resumed_input`; an expired one has
        none and :meth:`input_expired` says so.

        Args:
            message: What the human is asked.
            schema: A JSON schema the answer must satisfy; ``None`` accepts any value.
            interrupt_id: An explicit id, unique within the invocation.
            timeout: How long to wait (a ``timedelta`` or seconds; the app's default when
                ``None``). On expiry the call re-enters without the input.

        Returns:
            The interrupt id.

        Raises:
            ValueError: ``schema`` is not a valid JSON schema.
        """
        if schema is not None:
            check_input_schema(schema)
        if interrupt_id is None:
            self._call.default_inputs_requested += 1
            interrupt_id = default_interrupt_id(
                self._function_call_id, self._call.default_inputs_requested
            )
        ic = self._invocation_context
        if interrupt_id in ic.resume_inputs or interrupt_id in ic.expired_inputs:
            return interrupt_id
        self._actions.requested_inputs[interrupt_id] = InputRequest(
            interrupt_id=interrupt_id,
            function_call_id=self._function_call_id,
            message=message,
            input_schema=schema,
            timeout_seconds=_seconds(timeout),
        )
        self._actions.skip_summarization = True
        return interrupt_id

    def resumed_input(self, interrupt_id: str | None = None) -> Resumed | None:
        """The answer to one of this call's input requests.

        Args:
            interrupt_id: The id ``request_input`` returned; ``None`` means this call's
                first request without an explicit id.

        Returns:
            ``Resumed(value=...)`` when answered (``value`` may be ``None``), ``None`` when
            not answered.
        """
        if interrupt_id is None:
            interrupt_id = default_interrupt_id(self._function_call_id, 1)
        return self._invocation_context.resumed_input(interrupt_id)

    def input_expired(self, interrupt_id: str | None = None) -> bool:
        """True when one of this call's input requests expired unanswered.

        Args:
            interrupt_id: As for :meth:`resumed_input`.
        """
        if interrupt_id is None:
            interrupt_id = default_interrupt_id(self._function_call_id, 1)
        return interrupt_id in self._invocation_context.expired_inputs

    async def search_memory(self, query: str) -> SearchMemoryResponse:
        """Search the memory of all sessions of this app and user.

        Args:
            query: What to look for.

        Returns:
            The matching memories.

        Raises:
            MemoryServiceNotConfiguredError: The invocation has no memory service.
        """
        service = self._invocation_context.memory_service
        if service is None:
            raise MemoryServiceNotConfiguredError(
                "search_memory needs a memory service, but none is configured for this "
                "invocation; pass memory_service= to the runtime"
            )
        return await service.search(self.app_name, self.user_id, query)
