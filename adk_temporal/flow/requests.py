"""``RequestBook``: the invocation's open confirmation and input requests and their answers.

Pure bookkeeping, deterministic and free of Temporal calls, so the workflow stays readable
and the rules are unit-testable: answers for unknown ids are buffered (an interrupt id a
tool chooses can be known before the tool asks), duplicates are no-ops, a reply that does
not fit its request (wrong kind, digest of other arguments, schema violation) is refused
and the request stays open.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, TypeAlias

from google.genai import types

from adk_temporal.confirmation import check_reply_digest, confirmation_request_call
from adk_temporal.errors import (
    AdkRequestError,
    ConfirmationMismatchError,
    InvalidResumeInputError,
    UnknownRequestIdError,
)
from adk_temporal.events import InputRequest, ToolConfirmation
from adk_temporal.resume import check_resume_input

from .messages import CarriedRequest, ConfirmInput, PendingRequest, ResumeInput

__all__ = ["Answer", "Outcome", "RequestBook", "answer_id", "refusal"]

Answer: TypeAlias = ConfirmInput | ResumeInput
"""A reply to a confirmation or an input request."""

Outcome: TypeAlias = Literal["accepted", "buffered", "duplicate", "refused"]
"""What :meth:`RequestBook.accept` did with an answer."""


_REFUSALS: dict[str, type[AdkRequestError]] = {
    kind.__name__: kind
    for kind in (UnknownRequestIdError, ConfirmationMismatchError, InvalidResumeInputError)
}


def refusal(type_name: str, message: str) -> AdkRequestError | None:
    """The refusal :meth:`RequestBook.problem` gave, rebuilt from its class name and message.

    Returns ``None`` when ``type_name`` names no such refusal.
    """
    kind = _REFUSALS.get(type_name)
    return kind(message) if kind is not None else None


def answer_id(answer: Answer) -> str:
    """The request id an answer refers to."""
    return answer.confirmation_id if isinstance(answer, ConfirmInput) else answer.interrupt_id


def _digest_problem(pending: PendingRequest, answer: ConfirmInput) -> AdkRequestError | None:
    """The call-binding rule of :mod:`adk_temporal.confirmation`, applied to a signal."""
    request = confirmation_request_call(
        pending.id,
        types.FunctionCall(id=pending.function_call_id, name=pending.tool, args=pending.args),
        ToolConfirmation(hint=pending.hint, payload=pending.payload),
    )
    reply = {} if answer.call_digest is None else {"callDigest": answer.call_digest}
    try:
        check_reply_digest(request, reply)
    except ConfirmationMismatchError as err:
        return err
    return None


class _Open:
    def __init__(self, pending: PendingRequest, input_request: InputRequest | None) -> None:
        self.pending = pending
        self.input_request = input_request
        self.answer: Answer | None = None


class RequestBook:
    """Open requests by id, answers, and answers that arrived before their request."""

    def __init__(self) -> None:
        self._open: dict[str, _Open] = {}
        self._answered: set[str] = set()
        self._early: dict[str, Answer] = {}
        self.ignored: list[str] = []

    def open(self, pending: PendingRequest, input_request: InputRequest | None = None) -> None:
        """Register a request; an answer buffered for its id is applied at once."""
        self._open[pending.id] = _Open(pending, input_request)
        early = self._early.pop(pending.id, None)
        if early is not None:
            self.accept(early)

    def problem(self, answer: Answer) -> AdkRequestError | None:
        """Why ``answer`` cannot be applied to an open request now, or ``None``.

        Returns:
            The refusal a checked answer raises: :class:`UnknownRequestIdError` (unknown,
            answered, or of the other kind), :class:`ConfirmationMismatchError` (the call
            digest differs) or :class:`InvalidResumeInputError` (schema violation).
        """
        request_id = answer_id(answer)
        noun = "confirmation" if isinstance(answer, ConfirmInput) else "interrupt"
        entry = self._open.get(request_id)
        if request_id in self._answered or (entry is not None and entry.answer is not None):
            return UnknownRequestIdError(f"{noun} id {request_id!r} was already answered")
        if entry is None:
            open_ids = ", ".join(sorted(self.unanswered_ids())) or "none"
            return UnknownRequestIdError(
                f"unknown {noun} id {request_id!r}; open requests: {open_ids}"
            )
        pending = entry.pending
        if isinstance(answer, ConfirmInput):
            if pending.kind != "confirmation":
                return UnknownRequestIdError(
                    f"{request_id!r} is an input request; answer it with adk_resume"
                )
            return _digest_problem(pending, answer)
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

    def accept(self, answer: Answer) -> Outcome:
        """Apply ``answer`` if it fits an open request; buffer it if its id is unknown."""
        request_id = answer_id(answer)
        entry = self._open.get(request_id)
        if request_id in self._answered or (entry is not None and entry.answer is not None):
            return "duplicate"
        if entry is None:
            self._early.setdefault(request_id, answer)
            return "buffered"
        problem = self.problem(answer)
        if problem is not None:
            self.ignored.append(f"{request_id}: {problem}")
            return "refused"
        entry.answer = answer
        return "accepted"

    def answered(self, ids: Iterable[str]) -> bool:
        """True when every request in ``ids`` has an answer."""
        return all(self._open[i].answer is not None for i in ids)

    def take(self, ids: Iterable[str]) -> list[tuple[PendingRequest, Answer]]:
        """Close the answered requests ``ids``; return them with their answers, in order."""
        taken: list[tuple[PendingRequest, Answer]] = []
        for request_id in ids:
            entry = self._open.pop(request_id)
            assert entry.answer is not None
            self._answered.add(request_id)
            taken.append((entry.pending, entry.answer))
        return taken

    def unanswered(self) -> list[PendingRequest]:
        """The open requests still waiting for an answer, in the order they were opened."""
        return [e.pending for e in self._open.values() if e.answer is None]

    def open_ids(self) -> list[str]:
        """The ids of every open request, answered or not, in the order they were opened."""
        return list(self._open)

    def unanswered_ids(self) -> list[str]:
        """The ids of :meth:`unanswered`."""
        return [p.id for p in self.unanswered()]

    def waiting_for(self) -> Literal["confirmation", "input"] | None:
        """What the invocation waits for: confirmation before input; ``None`` if nothing."""
        kinds = {p.kind for p in self.unanswered()}
        if "confirmation" in kinds:
            return "confirmation"
        return "input" if kinds else None

    def report(self) -> list[str]:
        """Answers that changed nothing: refused ones and those for ids never opened."""
        return [*self.ignored, *(f"{k}: unknown id" for k in self._early)]

    def carry(self) -> tuple[list[CarriedRequest], list[str], list[Answer]]:
        """Everything needed to rebuild the book in a new run."""
        carried = [
            CarriedRequest(pending=e.pending, input_request=e.input_request, answer=e.answer)
            for e in self._open.values()
        ]
        return carried, sorted(self._answered), list(self._early.values())

    def restore(
        self,
        carried: Iterable[CarriedRequest],
        answered: Iterable[str],
        early: Iterable[Answer],
        ignored: Iterable[str],
    ) -> None:
        """Rebuild the book from :meth:`carry`'s output."""
        for item in carried:
            entry = _Open(item.pending, item.input_request)
            entry.answer = item.answer
            self._open[item.pending.id] = entry
        self._answered = set(answered)
        self._early = {answer_id(a): a for a in early}
        self.ignored = list(ignored)
