"""RequestBook: buffering, duplicates, refusals and carrying open requests (SPEC §3)."""

from __future__ import annotations

import pytest

from adk_temporal.budgets import Budgets
from adk_temporal.confirmation import call_digest
from adk_temporal.errors import InvalidAnswerError, UnknownRequestIdError
from adk_temporal.events import InputRequest
from adk_temporal.flow.messages import ConfirmInput, InvocationCarry, PendingRequest, ResumeInput
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
    assert book.report() == [
        "seat (input, 37 bytes): unknown id; kept until a request with this id opens"
    ]
    book.open(*_input())
    assert book.answered(["seat"])
    [(pending, answer, _)] = book.take(["seat"])
    assert pending.id == "seat"
    assert answer == ResumeInput(interrupt_id="seat", input="12A")
    assert book.report() == []


def test_duplicate_answers_are_no_ops() -> None:
    """A second answer, before or after the request is closed, changes nothing."""
    book = RequestBook()
    book.open(_confirmation())
    assert book.accept(ConfirmInput(confirmation_id="adk-1", confirmed=True)) == "accepted"
    assert book.accept(ConfirmInput(confirmation_id="adk-1", confirmed=False)) == "duplicate"
    [(_, answer, _)] = book.take(["adk-1"])
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
    assert reasons[3].endswith("schema violation at $: type")
    assert "12" not in reasons[3].split(":", 1)[1]  # the value itself is never recorded


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
    carried, answered, early, refusals = book.carry()
    restored = RequestBook()
    restored.restore(
        InvocationCarry(
            invocation_id="e-1",
            step=1,
            open_requests=carried,
            answered=answered,
            early=early,
            refusals=refusals,
        )
    )
    assert restored.open_ids() == ["adk-1", "seat"]
    assert restored.unanswered_ids() == ["adk-1"]
    assert restored.report() == [
        "later (input, 34 bytes): unknown id; kept until a request with this id opens"
    ]
    assert restored.accept(ConfirmInput(confirmation_id="adk-1", confirmed=True)) == "accepted"
    assert restored.answered(["adk-1", "seat"])


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({}, "malformed: confirmation_id: Field required; confirmed: Field required"),
        ({"confirmation_id": "adk-1"}, "malformed: confirmed: Field required"),
        ({"confirmation_id": "adk-1", "confirmed": "yes"}, "malformed: confirmed: Input"),
        ("approve", "malformed: answer: Input should be"),
    ],
)
def test_malformed_answers_are_refused_and_listed(raw: object, reason: str) -> None:
    """An answer of the wrong shape is recorded with its reason; the request stays open."""
    book = RequestBook()
    book.open(_confirmation())
    assert book.accept(book.parse("confirmation", raw)) == "refused"
    [line] = book.report()
    assert reason in line
    assert book.unanswered_ids() == ["adk-1"]
    with pytest.raises(InvalidAnswerError, match="refused: malformed"):
        book.check("confirmation", raw)


def test_an_oversized_answer_is_refused_by_size_never_by_content() -> None:
    """Over answer_bytes: refused, listed with id and size; the payload is not kept."""
    book = RequestBook(Budgets(answer_bytes=1000))
    book.open(_confirmation())
    secret = "s3cr3t" * 400
    raw = {"confirmation_id": "adk-1", "confirmed": True, "payload": secret}
    assert book.accept(book.parse("confirmation", raw)) == "refused"
    [refusal] = book.refusals()
    assert (refusal.id, refusal.kind) == ("adk-1", "confirmation")
    assert refusal.size > 2400
    assert "over the answer_bytes budget of 1000" in refusal.reason
    assert "s3cr3t" not in str(book.carry())
    assert book.unanswered_ids() == ["adk-1"]


def test_early_answers_are_bounded_in_count_and_bytes() -> None:
    """Past the buffer's count or bytes, answers for unknown ids are refused, not kept."""
    book = RequestBook(Budgets(buffered_answers=2, buffered_answer_bytes=10_000))
    for n in range(3):
        book.accept(ResumeInput(interrupt_id=f"x{n}", input=n))
    assert [r.id for r in book.refusals()] == ["x2", "x0", "x1"]
    assert "buffer of early answers is full" in book.refusals()[0].reason
    small = RequestBook(Budgets(buffered_answer_bytes=100))
    assert small.accept(ResumeInput(interrupt_id="big", input="y" * 200)) == "refused"
    assert small.carry()[2] == []


def test_refusal_records_keep_only_the_latest() -> None:
    """Junk answers cannot grow the book: the oldest records go, and the report says so."""
    book = RequestBook(Budgets(refusal_records=3))
    book.open(_confirmation())
    for n in range(10):
        book.accept(book.parse("confirmation", {"confirmation_id": f"j{n}"}))
    assert [r.id for r in book.carry()[3]] == ["j7", "j8", "j9"]
    assert book.report()[0] == "... 7 earlier refusals not kept"
