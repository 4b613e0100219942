"""RequestBook: buffering, duplicates, refusals and carrying open requests (SPEC §3)."""

from __future__ import annotations

from adk_temporal.confirmation import call_digest
from adk_temporal.errors import UnknownRequestIdError
from adk_temporal.events import InputRequest
from adk_temporal.flow.messages import ConfirmInput, PendingRequest, ResumeInput
from adk_temporal.flow.requests import RequestBook

SCHEMA = {"type": "string"}


def _confirmation(request_id: str = "adk-1") -> PendingRequest:
    return PendingRequest(
        kind="confirmation",
        id=request_id,
        function_call_id="call-1",
        tool="buy",
        args={"city": "Oslo"},
        call_digest=call_digest("buy", {"city": "Oslo"}),
    )


def _input(request_id: str = "seat") -> tuple[PendingRequest, InputRequest]:
    pending = PendingRequest(kind="input", id=request_id, function_call_id="call-2", tool="pick")
    request = InputRequest(interrupt_id=request_id, function_call_id="call-2", input_schema=SCHEMA)
    return pending, request


def test_answer_before_its_request_is_buffered_then_applied() -> None:
    """An early answer is kept and answers the request the moment it opens."""
    book = RequestBook()
    assert book.accept(ResumeInput(interrupt_id="seat", input="12A")) == "buffered"
    assert book.report() == ["seat: unknown id"]
    book.open(*_input())
    assert book.answered(["seat"])
    [(pending, answer)] = book.take(["seat"])
    assert pending.id == "seat"
    assert answer == ResumeInput(interrupt_id="seat", input="12A")
    assert book.report() == []


def test_duplicate_answers_are_no_ops() -> None:
    """A second answer, before or after the request is closed, changes nothing."""
    book = RequestBook()
    book.open(_confirmation())
    assert book.accept(ConfirmInput(confirmation_id="adk-1", confirmed=True)) == "accepted"
    assert book.accept(ConfirmInput(confirmation_id="adk-1", confirmed=False)) == "duplicate"
    [(_, answer)] = book.take(["adk-1"])
    assert isinstance(answer, ConfirmInput) and answer.confirmed
    assert book.accept(ConfirmInput(confirmation_id="adk-1", confirmed=False)) == "duplicate"
    problem = book.problem(ConfirmInput(confirmation_id="adk-1", confirmed=True))
    assert isinstance(problem, UnknownRequestIdError)
    assert str(problem) == "confirmation id 'adk-1' was already answered"


def test_wrong_kind_digest_and_schema_are_refused_and_keep_the_request_open() -> None:
    """Refused answers are reported with the reason; the request still waits."""
    book = RequestBook()
    book.open(_confirmation())
    book.open(*_input())
    assert book.accept(ResumeInput(interrupt_id="adk-1", input="x")) == "refused"
    assert book.accept(ConfirmInput(confirmation_id="seat", confirmed=True)) == "refused"
    other = call_digest("buy", {"city": "Rome"})
    wrong_digest = ConfirmInput(confirmation_id="adk-1", confirmed=True, call_digest=other)
    assert book.accept(wrong_digest) == "refused"
    assert book.accept(ResumeInput(interrupt_id="seat", input=12)) == "refused"
    assert book.unanswered_ids() == ["adk-1", "seat"]
    reasons = book.report()
    assert "'adk-1' is a confirmation request; answer it with adk_confirm" in reasons[0]
    assert "'seat' is an input request; answer it with adk_resume" in reasons[1]
    assert f"callDigest {other!r} does not match" in reasons[2]
    assert "12 is not of type 'string'" in reasons[3]


def test_unknown_id_problem_lists_the_open_ids() -> None:
    """A checked update for an unknown id is told which ids are open."""
    book = RequestBook()
    book.open(_confirmation("adk-7"))
    problem = book.problem(ConfirmInput(confirmation_id="adk-x", confirmed=True))
    assert isinstance(problem, UnknownRequestIdError)
    assert str(problem) == "unknown confirmation id 'adk-x'; open requests: adk-7"


def test_waiting_for_prefers_confirmation() -> None:
    """The status names confirmation while any approval is open, then input, then nothing."""
    book = RequestBook()
    assert book.waiting_for() is None
    book.open(*_input())
    assert book.waiting_for() == "input"
    book.open(_confirmation())
    assert book.waiting_for() == "confirmation"
    book.accept(ConfirmInput(confirmation_id="adk-1", confirmed=True))
    assert book.waiting_for() == "input"


def test_carry_and_restore_keep_requests_answers_and_buffer() -> None:
    """Across continue-as-new the same ids stay open, answered or buffered."""
    book = RequestBook()
    book.open(_confirmation())
    book.open(*_input())
    book.accept(ResumeInput(interrupt_id="seat", input="3C"))
    book.accept(ResumeInput(interrupt_id="later", input=1))
    carried, answered, early = book.carry()
    restored = RequestBook()
    restored.restore(carried, answered, early, book.ignored)
    assert restored.open_ids() == ["adk-1", "seat"]
    assert restored.unanswered_ids() == ["adk-1"]
    assert restored.report() == ["later: unknown id"]
    assert restored.accept(ConfirmInput(confirmation_id="adk-1", confirmed=True)) == "accepted"
    assert restored.answered(["adk-1", "seat"])
