"""``RequestBook``: the invocation's open confirmation and input requests and their answers.

Pure bookkeeping, deterministic and free of Temporal calls, so the workflow stays readable
and the rules are unit-testable: answers for unknown ids are buffered (an interrupt id a
tool chooses can be known before the tool asks), duplicates are no-ops, a reply that does
not fit its request (wrong kind, digest of other arguments, schema violation) is refused
and the request stays open.

Every answer is accounted for and nothing grows without bound. An answer arrives raw — any
JSON at all — and :meth:`RequestBook.parse` checks its shape and size first: a malformed or
oversized answer is refused like any other. Refusals are recorded as id, kind, size and
reason, never the payload, and only the latest :attr:`Budgets.refusal_records` are kept;
answers buffered for requests not open yet are bounded in count and bytes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple, TypeAlias

from google.genai import types
from pydantic import ValidationError

from adk_temporal.approvals import (
    AnonymousAnswerError,
    DuplicateVoteError,
    InboxAction,
    InvalidPolicyError,
    NotAnApproverError,
    RequestClaimedError,
    SelfApprovalError,
    StaleRequestError,
)
from adk_temporal.budgets import Budgets, json_size, wide_integer
from adk_temporal.confirmation import check_reply_digest, confirmation_request_call
from adk_temporal.errors import (
    AdkRequestError,
    ConfirmationMismatchError,
    EditNotAllowedError,
    InvalidAnswerError,
    InvalidEditError,
    InvalidResumeInputError,
    UnencodableValueError,
    UnknownRequestIdError,
)
from adk_temporal.events import InputRequest, ToolConfirmation
from adk_temporal.resume import check_resume_input, schema_errors

from .approving import (
    Escalation,
    answer_problem,
    cast_vote,
    due_escalations,
    escalate,
    inbox_problem,
    next_escalation,
    take_inbox,
)
from .messages import (
    CarriedRequest,
    ConfirmInput,
    InvocationCarry,
    PendingConfirmation,
    PendingRequest,
    Refusal,
    ResumeInput,
)

__all__ = [
    "ANSWERED_KEY",
    "Answer",
    "AnswerKind",
    "Outcome",
    "RequestBook",
    "Taken",
    "answer_id",
    "answer_record",
    "parse_answer",
    "refusal",
    "refused",
    "requesters_of",
    "stamped",
]

AnswerKind: TypeAlias = Literal["confirmation", "input"]
"""What an answer answers: a confirmation request or an input request."""

_ANSWERED_KEPT = 1024
"""How many answered ids a run remembers to spot duplicates (older ones are forgotten)."""

Answer: TypeAlias = ConfirmInput | ResumeInput
"""A reply to a confirmation or an input request."""

Outcome: TypeAlias = Literal["accepted", "voted", "buffered", "duplicate", "refused"]
"""What :meth:`RequestBook.accept` did with an answer: ``voted`` took a vote that does not
decide its request yet (the policy wants more)."""


_REFUSALS: dict[str, type[AdkRequestError]] = {
    kind.__name__: kind
    for kind in (
        UnknownRequestIdError,
        ConfirmationMismatchError,
        InvalidResumeInputError,
        InvalidAnswerError,
        EditNotAllowedError,
        InvalidEditError,
        AnonymousAnswerError,
        NotAnApproverError,
        SelfApprovalError,
        DuplicateVoteError,
        RequestClaimedError,
        StaleRequestError,
        InvalidPolicyError,
    )
}


def refusal(type_name: str, message: str) -> AdkRequestError | None:
    """The refusal :meth:`RequestBook.problem` gave, rebuilt from its class name and message.

    Returns ``None`` when ``type_name`` names no such refusal.
    """
    kind = _REFUSALS.get(type_name)
    return kind(message) if kind is not None else None


ANSWERED_KEY = "answered"
"""The key of a reply event's response naming who answered, how and when."""


def stamped(answer: Answer, *, now: float, channel: str) -> Answer:
    """``answer`` as the run takes it: at ``now`` by the run's clock (never the sender's),
    through ``channel`` unless the sender named one."""
    return answer.model_copy(update={"answered_at": now, "channel": answer.channel or channel})


def answer_record(answer: Answer) -> dict[str, Any] | None:
    """Who answered, through which channel and when, as the reply event records it;
    ``None`` for an answer the run did not stamp (recorded before answers were, or expired)."""
    if answer.answered_at is None:
        return None
    return {"by": answer.answered_by, "channel": answer.channel, "at": answer.answered_at}


def requesters_of(started_by: str | None, user_id: str) -> tuple[str, ...]:
    """The principals that count as an invocation's requester: who started it, and the
    session's user (on whose behalf the agent acts)."""
    return tuple(p for p in dict.fromkeys((started_by, user_id)) if p)


def answer_id(answer: Answer) -> str:
    """The request id an answer refers to."""
    return answer.confirmation_id if isinstance(answer, ConfirmInput) else answer.interrupt_id


def _kind(answer: Answer) -> AnswerKind:
    return "confirmation" if isinstance(answer, ConfirmInput) else "input"


_LATER_FIELDS = ("answered_by", "channel", "answered_at", "edited_args", "groups", "grant")
"""Answer fields added after answers' sizes were first recorded."""


def _size(answer: Answer) -> int:
    # Unset later fields are not counted: an answer's size is what its sender sent.
    unset = {name for name in _LATER_FIELDS if getattr(answer, name, None) is None}
    return json_size(answer.model_dump(mode="json", exclude=unset), "the answer")


def _reason(problem: AdkRequestError) -> str:
    """A refusal's reason without the answer's value (schema messages quote the value)."""
    if isinstance(problem, InvalidResumeInputError) and problem.violated:
        return f"schema violation at {'; '.join(problem.violated)}"
    return str(problem)


def _digest_problem(pending: PendingConfirmation, answer: ConfirmInput) -> AdkRequestError | None:
    """The call-binding rule of :mod:`adk_temporal.confirmation`, applied to a signal.

    A signal without a digest is addressed by confirmation id alone; the runtime binds it by
    writing the pending request's digest into the reply event."""
    if answer.call_digest is None:
        return None
    request = confirmation_request_call(
        pending.id,
        types.FunctionCall(id=pending.function_call_id, name=pending.tool, args=pending.args),
        ToolConfirmation(hint=pending.hint, payload=pending.payload),
    )
    try:
        check_reply_digest(request, {"callDigest": answer.call_digest})
    except ConfirmationMismatchError as err:
        return err
    return None


def _edit_problem(pending: PendingConfirmation, answer: ConfirmInput) -> AdkRequestError | None:
    """Why an approval's edited arguments cannot replace the call's, or ``None``."""
    if answer.edited_args is None:
        return None
    if pending.edit_schema is None:
        return EditNotAllowedError(
            f"tool {pending.tool!r} does not take edited arguments: declare it with "
            "editable=True, or answer without them"
        )
    if not answer.confirmed:
        return EditNotAllowedError(
            f"edited arguments come with an approval, not a rejection ({pending.id!r})"
        )
    wide = wide_integer(answer.edited_args, "$")
    if wide is not None:
        # The model's own calls never carry one; a tool in most languages (and SQLite)
        # would overflow or round it, after the approver saw the exact number.
        return InvalidEditError(
            f"edited arguments for {pending.tool!r} hold an integer outside 64 bits at {wide}"
        )
    errors = schema_errors(pending.edit_schema, answer.edited_args)
    if errors:
        # Paths and rules only: refusals are recorded, and must not hold the values.
        broken = "; ".join(f"{e.json_path}: {e.validator}" for e in errors)
        return InvalidEditError(
            f"edited arguments for {pending.tool!r} break its parameter schema at {broken}"
        )
    return None


def parse_answer(kind: AnswerKind, raw: Any, budgets: Budgets) -> Answer | Refusal:
    """Read a raw answer (any JSON): the answer, or the refusal of a malformed or oversized
    one, naming the id when the payload has one."""
    model = ConfirmInput if kind == "confirmation" else ResumeInput
    id_field = "confirmation_id" if kind == "confirmation" else "interrupt_id"
    found = raw.get(id_field) if isinstance(raw, dict) else None
    request_id = found if isinstance(found, str) else "?"
    try:
        size = json_size(raw, "the answer")
    except UnencodableValueError as err:
        # NaN and infinities would reach the tool as null: refused, as in tool results.
        return Refusal(id=request_id, kind=kind, size=0, reason=f"not strict JSON: {err}")
    if size > budgets.answer_bytes:
        reason = f"{size} bytes, over the answer_bytes budget of {budgets.answer_bytes}"
        return Refusal(id=request_id, kind=kind, size=size, reason=reason)
    try:
        return model.model_validate(raw)
    except ValidationError as err:
        # pydantic's messages name the field and the rule, never the value.
        wrong = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in err.errors()
        )
        return Refusal(id=request_id, kind=kind, size=size, reason=f"malformed: {wrong}")


def refused(refusal: Refusal) -> InvalidAnswerError:
    """The error a checked answer that :func:`parse_answer` refused raises."""
    return InvalidAnswerError(f"answer for {refusal.id!r} refused: {refusal.reason}")


def _repeats_vote(pending: PendingRequest, answer: Answer) -> bool:
    """Whether ``answer`` is a vote its principal already cast, with the same decision."""
    if not isinstance(pending, PendingConfirmation) or not isinstance(answer, ConfirmInput):
        return False
    return any(v.by == answer.answered_by and v.approve == answer.confirmed for v in pending.votes)


class Taken(NamedTuple):
    """A closed request with its answer; ``expired`` when nobody answered in time."""

    pending: PendingRequest
    answer: Answer
    expired: bool


class _Open:
    def __init__(self, pending: PendingRequest, input_request: InputRequest | None) -> None:
        self.pending = pending
        self.input_request = input_request
        self.answer: Answer | None = None
        self.expired = False


class RequestBook:
    """Open requests by id, answers, answers that arrived before their request, refusals.

    Args:
        budgets: Bounds the size of one answer and the buffer of early answers, and how
            many refusals are remembered.
        requesters: The principals that count as the invocation's requester (who started
            it, the session's user): a policy may keep them from approving its calls.
    """

    def __init__(self, budgets: Budgets | None = None, *, requesters: Iterable[str] = ()) -> None:
        self._budgets = budgets or Budgets()
        self._requesters = frozenset(requesters)
        self._open: dict[str, _Open] = {}
        self._answered: dict[str, None] = {}
        self._early: dict[str, tuple[Answer, int]] = {}
        self._refusals: deque[Refusal] = deque(maxlen=self._budgets.refusal_records)
        self._forgotten = 0
        self._expired: dict[str, float] = {}
        self._unstored: set[str] = set()
        self._reopened: dict[str, str] = {}

    def parse(self, kind: AnswerKind, raw: Any) -> Answer | Refusal:
        """:func:`parse_answer` with this book's budgets."""
        return parse_answer(kind, raw, self._budgets)

    def open(
        self,
        pending: PendingRequest,
        input_request: InputRequest | None = None,
        *,
        stored: bool = True,
    ) -> None:
        """Register a request; an answer buffered for its id is applied at once.

        ``stored=False``: the request's events are still on their way to the session, and
        it is not listed (:meth:`unanswered` with ``listed_only``) until :meth:`stored`.
        """
        if (
            isinstance(pending, PendingConfirmation)
            and pending.policy is not None
            and not pending.policy.requester_may_approve
        ):
            pending = pending.model_copy(update={"requesters": sorted(self._requesters)})
        self._open[pending.id] = _Open(pending, input_request)
        self._note_reopened(pending)
        if not stored:
            self._unstored.add(pending.id)
        self._answered.pop(pending.id, None)
        self._expired.pop(pending.id, None)
        early = self._early.pop(pending.id, None)
        if early is not None:
            self.accept(early[0])

    def check(self, kind: AnswerKind, raw: Any, *, now: float | None = None) -> Answer:
        """``raw`` as an answer that fits an open request now, else the refusal raised.

        What a checked answer goes through; changes nothing. ``now`` is the run's time, for
        claims (see :meth:`problem`).

        Raises:
            InvalidAnswerError: ``raw`` is malformed or over its budget.
            UnknownRequestIdError, ConfirmationMismatchError, InvalidResumeInputError,
                PolicyRefusalError: See :meth:`problem`.
        """
        answer = self.parse(kind, raw)
        if isinstance(answer, Refusal):
            raise refused(answer)
        problem = self.problem(answer, now)
        if problem is not None:
            raise problem
        return answer

    def problem(self, answer: Answer, now: float | None = None) -> AdkRequestError | None:
        """Why ``answer`` cannot be applied to an open request now, or ``None``.

        Args:
            answer: The answer.
            now: The run's time (claims lapse); by default the time the run stamped on the
                answer, and without either every claim holds.

        Returns:
            The refusal a checked answer raises: :class:`UnknownRequestIdError` (unknown,
            answered, or of the other kind), :class:`StaleRequestError` (re-opened under
            another id), :class:`ConfirmationMismatchError` (the call digest differs),
            :class:`EditNotAllowedError` or :class:`InvalidEditError` (edited arguments the
            tool does not take), :class:`InvalidResumeInputError` (schema violation), or
            the :class:`~adk_temporal.approvals.PolicyRefusalError` of the request's claim
            or approval policy.
        """
        entry = self._open.get(answer_id(answer))
        closed = self._closed_problem(answer, entry)
        if closed is not None:
            return closed
        assert entry is not None
        unfit = self._fit_problem(entry, answer)
        if unfit is not None:
            return unfit
        when = now if now is not None else answer.answered_at
        return answer_problem(entry.pending, answer, self._requesters, when)

    def _closed_problem(self, answer: Answer, entry: _Open | None) -> AdkRequestError | None:
        """Why ``answer``'s request takes no answer at all (expired, answered, re-opened,
        unknown), or ``None`` when it is open."""
        request_id = answer_id(answer)
        noun = "confirmation" if isinstance(answer, ConfirmInput) else "interrupt"
        expired = self._expired.get(request_id)
        if entry is None and expired is not None:
            when = datetime.fromtimestamp(expired, UTC)
            return UnknownRequestIdError(
                f"{noun} id {request_id!r} expired at {when:%Y-%m-%d %H:%M:%S} UTC unanswered"
            )
        reopened = self._reopened.get(request_id)
        if entry is None and reopened in self._open:
            return StaleRequestError(
                f"request {request_id!r} was re-opened as {reopened!r} (its approval was "
                f"older than the policy's max_age when the call was to run): answer {reopened!r}"
            )
        if request_id in self._answered or (entry is not None and entry.answer is not None):
            return UnknownRequestIdError(f"{noun} id {request_id!r} was already answered")
        if entry is None:
            open_ids = ", ".join(sorted(self.unanswered_ids())) or "none"
            return UnknownRequestIdError(
                f"unknown {noun} id {request_id!r}; open requests: {open_ids}"
            )
        return None

    @staticmethod
    def _fit_problem(entry: _Open, answer: Answer) -> AdkRequestError | None:
        """Why ``answer`` does not fit the open request ``entry`` (its kind, the call's
        digest, edits, the input's schema), or ``None``."""
        request_id = answer_id(answer)
        pending = entry.pending
        if isinstance(answer, ConfirmInput):
            if pending.kind != "confirmation":
                return UnknownRequestIdError(
                    f"{request_id!r} is an input request; answer it with adk_resume"
                )
            return _digest_problem(pending, answer) or _edit_problem(pending, answer)
        if pending.kind != "input":
            return UnknownRequestIdError(
                f"{request_id!r} is a confirmation request; answer it with adk_confirm"
            )
        assert entry.input_request is not None
        try:
            check_resume_input(entry.input_request, answer.input)
        except InvalidResumeInputError as err:
            return err
        return None

    def accept(self, answer: Answer | Refusal) -> Outcome:
        """Apply ``answer`` if it fits an open request; buffer it if its id is unknown.

        A :class:`Refusal` (from :meth:`parse`) and an answer that does not fit are recorded;
        so is an early answer the buffer has no room for.
        """
        if isinstance(answer, Refusal):
            self._record(answer)
            return "refused"
        request_id = answer_id(answer)
        entry = self._open.get(request_id)
        if entry is None and request_id in self._expired:
            # A late answer is refused, not silently dropped as a duplicate.
            self._record(
                Refusal(
                    id=request_id,
                    kind=_kind(answer),
                    size=_size(answer),
                    reason=str(self.problem(answer)),
                )
            )
            return "refused"
        if request_id in self._answered or (entry is not None and entry.answer is not None):
            return "duplicate"
        if entry is None:
            return self._buffer(answer)
        problem = self.problem(answer)
        if isinstance(problem, DuplicateVoteError) and _repeats_vote(entry.pending, answer):
            return "duplicate"  # the same vote again (a retried signal): a no-op
        if problem is not None:
            self._record(
                Refusal(
                    id=request_id, kind=_kind(answer), size=_size(answer), reason=_reason(problem)
                )
            )
            return "refused"
        pending = entry.pending
        if isinstance(pending, PendingConfirmation) and pending.policy is not None:
            assert isinstance(answer, ConfirmInput)  # the kinds matched
            entry.pending, decided = cast_vote(pending, answer)
            if not decided:
                return "voted"
        entry.answer = answer
        return "accepted"

    def _buffer(self, answer: Answer) -> Outcome:
        request_id = answer_id(answer)
        if request_id in self._early:
            return "duplicate"
        size = _size(answer)
        budgets = self._budgets
        held = sum(s for _, s in self._early.values())
        if (
            len(self._early) >= budgets.buffered_answers
            or held + size > budgets.buffered_answer_bytes
        ):
            reason = (
                f"no request with this id is open and the buffer of early answers is full "
                f"({len(self._early)} answers, {held} bytes)"
            )
            self._record(Refusal(id=request_id, kind=_kind(answer), size=size, reason=reason))
            return "refused"
        self._early[request_id] = (answer, size)
        return "buffered"

    def _record(self, refusal: Refusal) -> None:
        if len(self._refusals) == self._refusals.maxlen:
            self._forgotten += 1
        self._refusals.append(refusal)

    def _note_reopened(self, pending: PendingRequest) -> None:
        if isinstance(pending, PendingConfirmation) and pending.reopened_from is not None:
            self._reopened[pending.reopened_from] = pending.id
            while len(self._reopened) > _ANSWERED_KEPT:
                del self._reopened[next(iter(self._reopened))]

    def parse_inbox(self, raw: Any) -> InboxAction | Refusal:
        """Read a raw claim, release or assignment (any JSON): the action, or its refusal."""
        found = raw.get("request_id") if isinstance(raw, dict) else None
        request_id = found if isinstance(found, str) else "?"
        try:
            size = json_size(raw, "the inbox action")
            if size > self._budgets.answer_bytes:
                reason = f"{size} bytes, over the answer_bytes budget"
                return Refusal(id=request_id, kind="inbox", size=size, reason=reason)
            return InboxAction.model_validate(raw)
        except UnencodableValueError as err:
            return Refusal(id=request_id, kind="inbox", size=0, reason=str(err))
        except ValidationError as err:
            wrong = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'action'}: {e['msg']}" for e in err.errors()
            )
            return Refusal(id=request_id, kind="inbox", size=size, reason=f"malformed: {wrong}")

    def inbox_problem(self, action: InboxAction, now: float) -> AdkRequestError | None:
        """Why ``action`` cannot be taken at ``now`` (the request is not open and waiting,
        another holds a claim, the claimant may not answer it), or ``None``."""
        entry = self._open.get(action.request_id)
        if entry is None or entry.answer is not None:
            open_ids = ", ".join(sorted(self.unanswered_ids())) or "none"
            return UnknownRequestIdError(
                f"no open request {action.request_id!r} to {action.action}; open requests: "
                f"{open_ids}"
            )
        return inbox_problem(entry.pending, action, now)

    def take_inbox(self, action: InboxAction | Refusal, now: float) -> Outcome:
        """Take a claim, release or assignment at ``now``, or record why not."""
        if isinstance(action, Refusal):
            self._record(action)
            return "refused"
        problem = self.inbox_problem(action, now)
        if problem is not None:
            self._record(
                Refusal(id=action.request_id, kind="inbox", size=0, reason=_reason(problem))
            )
            return "refused"
        entry = self._open[action.request_id]
        entry.pending = take_inbox(entry.pending, action, now)
        return "accepted"

    def next_escalation(self, ids: Iterable[str]) -> float | None:
        """When the next reminder or reassignment of the unanswered requests ``ids`` is due."""
        times = [
            next_escalation(entry.pending)
            for entry in (self._open[i] for i in ids)
            if entry.answer is None
        ]
        return min((t for t in times if t is not None), default=None)

    def escalate(self, ids: Iterable[str], now: float) -> list[tuple[PendingRequest, Escalation]]:
        """Take the reminders and reassignments of the unanswered requests ``ids`` due at
        ``now``; return each request as it stands after each, in order."""
        fired: list[tuple[PendingRequest, Escalation]] = []
        for request_id in ids:
            entry = self._open[request_id]
            if entry.answer is not None:
                continue
            for step in due_escalations(entry.pending, now):
                entry.pending = escalate(entry.pending, step, now)
                fired.append((entry.pending, step))
        return fired

    def close_all(self) -> None:
        """Close every open request unanswered (the invocation was cancelled)."""
        for request_id in list(self._open):
            del self._open[request_id]
            self._remember_answered(request_id)

    def unheard_of(self, request_id: str) -> bool:
        """Whether no request ``request_id`` was opened in this run or carried into it:
        not open, answered, expired nor re-opened under another id."""
        return not any(
            request_id in known
            for known in (self._open, self._answered, self._expired, self._reopened)
        )

    def answered(self, ids: Iterable[str]) -> bool:
        """True when every request in ``ids`` has an answer."""
        return all(self._open[i].answer is not None for i in ids)

    def earliest_expiry(self, ids: Iterable[str]) -> float | None:
        """When the first of the unanswered requests ``ids`` expires; ``None`` if none does."""
        deadlines = [
            entry.pending.expires_at
            for entry in (self._open[i] for i in ids)
            if entry.answer is None and entry.pending.expires_at is not None
        ]
        return min(deadlines, default=None)

    def expire(self, ids: Iterable[str], now: float) -> None:
        """Answer the requests ``ids`` whose deadline has passed as expired: a rejection for
        a confirmation, no value for an input. A later answer is refused."""
        for request_id in ids:
            entry = self._open[request_id]
            expires_at = entry.pending.expires_at
            if entry.answer is not None or expires_at is None or expires_at > now:
                continue
            entry.expired = True
            entry.answer = (
                ConfirmInput(confirmation_id=request_id, confirmed=False)
                if entry.pending.kind == "confirmation"
                else ResumeInput(interrupt_id=request_id)
            )
            self._expired[request_id] = expires_at
            while len(self._expired) > _ANSWERED_KEPT:
                del self._expired[next(iter(self._expired))]

    def take(self, ids: Iterable[str]) -> list[Taken]:
        """Close the answered (or expired) requests ``ids``; return them in order."""
        taken: list[Taken] = []
        for request_id in ids:
            entry = self._open.pop(request_id)
            self._unstored.discard(request_id)
            assert entry.answer is not None
            self._remember_answered(request_id)
            taken.append(Taken(entry.pending, entry.answer, entry.expired))
        return taken

    def _remember_answered(self, request_id: str) -> None:
        self._answered[request_id] = None
        while len(self._answered) > _ANSWERED_KEPT:
            del self._answered[next(iter(self._answered))]

    def stored(self, ids: Iterable[str]) -> None:
        """The events of requests ``ids`` are in the session now: list them."""
        self._unstored.difference_update(ids)

    def unanswered(self, *, listed_only: bool = False) -> list[PendingRequest]:
        """The open requests still waiting for an answer, in the order they were opened;
        ``listed_only``: only those whose events are stored, as queries list them."""
        return [
            e.pending
            for e in self._open.values()
            if e.answer is None and not (listed_only and e.pending.id in self._unstored)
        ]

    def opened(self) -> list[PendingRequest]:
        """Every open request, answered or not, in the order they were opened."""
        return [e.pending for e in self._open.values()]

    def open_ids(self) -> list[str]:
        """The ids of every open request, answered or not, in the order they were opened."""
        return list(self._open)

    def unanswered_ids(self) -> list[str]:
        """The ids of :meth:`unanswered`."""
        return [p.id for p in self.unanswered()]

    def waiting_for(self, *, listed_only: bool = False) -> Literal["confirmation", "input"] | None:
        """What the invocation waits for: confirmation before input; ``None`` if nothing.
        ``listed_only``: counting only the requests :meth:`unanswered` lists so."""
        kinds = {p.kind for p in self.unanswered(listed_only=listed_only)}
        if "confirmation" in kinds:
            return "confirmation"
        return "input" if kinds else None

    def refusals(self) -> list[Refusal]:
        """Answers that changed nothing, oldest first: refused ones, then those buffered for
        ids never opened."""
        waiting = [
            Refusal(
                id=request_id,
                kind=_kind(answer),
                size=size,
                reason="unknown id; kept until a request with this id opens",
            )
            for request_id, (answer, size) in self._early.items()
        ]
        return [*self._refusals, *waiting]

    def report(self) -> list[str]:
        """:meth:`refusals` as lines, ``id (kind, size): reason``, oldest first."""
        lines = [f"{r.id} ({r.kind}, {r.size} bytes): {r.reason}" for r in self.refusals()]
        if self._forgotten:
            lines.insert(0, f"... {self._forgotten} earlier refusals not kept")
        return lines

    def carry(self) -> tuple[list[CarriedRequest], list[str], list[Answer], list[Refusal]]:
        """Everything needed to rebuild the book in a new run, all of it bounded."""
        carried = [
            CarriedRequest(pending=e.pending, input_request=e.input_request, answer=e.answer)
            for e in self._open.values()
        ]
        early = [answer for answer, _ in self._early.values()]
        return carried, list(self._answered), early, list(self._refusals)

    def expired_ids(self) -> dict[str, float]:
        """The ids of requests that expired unanswered, with their deadlines (bounded)."""
        return dict(list(self._expired.items())[-_ANSWERED_KEPT:])

    def restore(self, carry: InvocationCarry) -> None:
        """Rebuild the book from what an earlier run carried (:meth:`carry`'s output).

        A run that carries requests restores them before it handles its first answer: an
        answer may arrive with the run's very first task, before the flow starts.
        """
        older = [
            Refusal(id=line.partition(":")[0], kind="confirmation", size=0, reason=line)
            for line in carry.ignored
        ]
        # Remembered so late answers to requests that expired in an earlier run are refused.
        self._expired.update(carry.expired)
        self._restore(carry.open_requests, carry.answered, carry.early, [*older, *carry.refusals])

    def _restore(
        self,
        carried: Iterable[CarriedRequest],
        answered: Iterable[str],
        early: Iterable[Answer],
        refusals: Iterable[Refusal],
    ) -> None:
        for item in carried:
            entry = _Open(item.pending, item.input_request)
            entry.answer = item.answer
            self._open[item.pending.id] = entry
            self._note_reopened(item.pending)
        for request_id in answered:
            self._remember_answered(request_id)
        for answer in early:
            self._buffer(answer)
        for refusal in refusals:
            self._record(refusal)
