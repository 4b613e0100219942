"""RequestBook: buffering, duplicates, refusals and carrying open requests (SPEC §3), and
the confirmation rules it applies to answers (SPEC §1.6, CTX-F)."""

from __future__ import annotations

import json

import pytest

from adk_temporal.budgets import Budgets
from adk_temporal.confirmation import call_digest
from adk_temporal.errors import (
    ConfirmationMismatchError,
    InvalidAnswerError,
    UnknownRequestIdError,
)
from adk_temporal.events import InputRequest
from adk_temporal.flow.messages import (
    ConfirmInput,
    InvocationCarry,
    PendingConfirmation,
    PendingInput,
    PendingRequest,
    Refusal,
    ResumeInput,
)
from adk_temporal.flow.requests import RequestBook

SCHEMA = {"type": "string"}


def _confirmation(request_id: str = "adk-1") -> PendingRequest:
    return PendingConfirmation(
        kind="confirmation",
        id=request_id,
        function_call_id="call-1",
        tool="buy",
        args={"city": "Oslo"},
        call_digest=call_digest("buy", {"city": "Oslo"}),
    )


def _input(request_id: str = "seat") -> tuple[PendingRequest, InputRequest]:
    pending = PendingInput(kind="input", id=request_id, function_call_id="call-2", tool="pick")
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


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_a_non_finite_answer_is_refused_not_turned_into_null(value: float) -> None:
    """NaN and infinities (``1e999`` from a JSON body) are refused as not strict JSON, as
    for tool results; the request stays open and nothing of the value is kept."""
    book = RequestBook()
    book.open(_confirmation())
    raw = {"confirmation_id": "adk-1", "confirmed": True, "payload": {"price": [1, value]}}
    assert book.accept(book.parse("confirmation", raw)) == "refused"
    [refusal] = book.refusals()
    assert refusal.id == "adk-1"
    assert "not strict JSON" in refusal.reason and "payload.price[1]" in refusal.reason
    assert book.unanswered_ids() == ["adk-1"]
    with pytest.raises(InvalidAnswerError, match="NaN or infinite"):
        book.check("input", {"interrupt_id": "seat", "input": value})


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


# ---- CTX-F: the confirmation rules the runtime applies to answers (SPEC §1.6) ----------

BUY_DIGEST = call_digest("buy", {"city": "Oslo"})


def _asked(request_id: str, call_id: str, *, agent: str = "report_agent") -> PendingRequest:
    """A confirmation request of ``agent`` for call ``call_id`` to ``buy`` in Oslo."""
    return PendingConfirmation(
        kind="confirmation",
        id=request_id,
        function_call_id=call_id,
        tool="buy",
        args={"city": "Oslo"},
        call_digest=BUY_DIGEST,
        agent=agent,
    )


@pytest.mark.parametrize(
    ("raw", "confirmed"),
    [
        ({"confirmation_id": "adk-1", "confirmed": True, "payload": {"n": 1}}, True),
        ({"confirmation_id": "adk-1", "confirmed": False, "payload": {"n": 1}}, False),
    ],
    ids=["approved", "rejected"],
)
def test_ctx_f13_answer_carries_the_decision_and_payload(
    raw: dict[str, object], confirmed: bool
) -> None:
    """An answer with a boolean ``confirmed`` is applied as given, payload included."""
    book = RequestBook()
    book.open(_asked("adk-1", "call-1"))
    answer = book.parse("confirmation", raw)
    assert answer == ConfirmInput(confirmation_id="adk-1", confirmed=confirmed, payload={"n": 1})
    assert book.accept(answer) == "accepted"
    [(pending, taken, expired)] = book.take(["adk-1"])
    assert (pending.id, pending.function_call_id, expired) == ("adk-1", "call-1", False)
    assert taken == ConfirmInput(confirmation_id="adk-1", confirmed=confirmed, payload={"n": 1})


@pytest.mark.parametrize(
    "raw",
    [
        {"confirmation_id": "adk-1", "confirmed": "yes"},
        {"confirmation_id": "adk-1", "confirmed": 1},
        {"confirmation_id": "adk-1", "confirmed": "true"},
        {"confirmation_id": "adk-1", "confirmed": None},
        {"confirmation_id": "adk-1", "response": json.dumps({"confirmed": True})},
    ],
    ids=["yes", "one", "true-string", "null", "json-string-reply"],
)
def test_ctx_f13_only_a_boolean_confirmed_answers(raw: dict[str, object]) -> None:
    """A non-boolean ``confirmed`` (or ADK's JSON-string reply as a signal) approves
    nothing: it is refused and the request stays open."""
    book = RequestBook()
    book.open(_asked("adk-1", "call-1"))
    refusal = book.parse("confirmation", raw)
    assert isinstance(refusal, Refusal)
    assert refusal.id == "adk-1"
    assert refusal.reason.startswith("malformed: confirmed: ")
    assert book.accept(refusal) == "refused"
    assert book.unanswered_ids() == ["adk-1"]
    assert not book.answered(["adk-1"])
    with pytest.raises(InvalidAnswerError, match="'adk-1' refused: malformed: confirmed"):
        book.check("confirmation", raw)


@pytest.mark.parametrize(
    "raw",
    [None, {}, {"response": ""}, {"response": "{not json"}, "{not json"],
    ids=["none", "empty", "empty-json-string", "bad-json-string", "bare-string"],
)
def test_ctx_f14_empty_or_unreadable_answer_approves_nothing(raw: object) -> None:
    """An empty or unreadable answer fails closed: refused, the request stays open."""
    book = RequestBook()
    book.open(_asked("adk-1", "call-1"))
    refusal = book.parse("confirmation", raw)
    assert isinstance(refusal, Refusal)
    assert refusal.reason.startswith("malformed: ")
    assert book.accept(refusal) == "refused"
    assert book.unanswered_ids() == ["adk-1"]
    assert not book.answered(["adk-1"])
    with pytest.raises(InvalidAnswerError, match="refused: malformed"):
        book.check("confirmation", raw)


def test_ctx_f12_mismatched_digest_is_refused_and_the_request_stays_open() -> None:
    """An answer bound to other arguments is refused and its request stays open; another
    request's fitting answer is applied, and the refused one waits for a fitting answer."""
    book = RequestBook()
    book.open(_asked("adk-c1", "call-1"))
    book.open(_asked("adk-c3", "call-3"))
    forged = call_digest("buy", {})
    bad = ConfirmInput(confirmation_id="adk-c1", confirmed=True, call_digest=forged)
    problem = book.problem(bad)
    assert isinstance(problem, ConfirmationMismatchError)
    assert f"callDigest {forged!r} does not match" in str(problem)
    with pytest.raises(ConfirmationMismatchError, match="approves a different call"):
        book.check("confirmation", bad.model_dump(mode="json"))
    assert book.accept(bad) == "refused"
    good = ConfirmInput(confirmation_id="adk-c3", confirmed=True, call_digest=BUY_DIGEST)
    assert book.accept(good) == "accepted"
    assert book.unanswered_ids() == ["adk-c1"]
    assert not book.answered(["adk-c1", "adk-c3"])
    assert book.answered(["adk-c3"])
    [line] = book.report()
    assert line.startswith("adk-c1 (confirmation, ")
    assert book.accept(ConfirmInput(confirmation_id="adk-c1", confirmed=False)) == "accepted"
    taken = book.take(["adk-c1", "adk-c3"])
    assert [(p.function_call_id, a) for p, a, _ in taken] == [
        ("call-1", ConfirmInput(confirmation_id="adk-c1", confirmed=False)),
        ("call-3", good),
    ]


def test_ctx_f12_answers_are_bound_to_the_call_itself() -> None:
    """No request in the book lacks a digest: an answer's digest is checked against the
    request's own call (tool and args), not against a stored digest field."""
    book = RequestBook()
    book.open(_asked("adk-1", "call-1").model_copy(update={"call_digest": ""}))
    for wrong in ("", call_digest("buy", {"city": "Rome"}), call_digest("sell", {"city": "Oslo"})):
        answer = ConfirmInput(confirmation_id="adk-1", confirmed=True, call_digest=wrong)
        assert isinstance(book.problem(answer), ConfirmationMismatchError)
        assert book.accept(answer) == "refused"
    assert book.unanswered_ids() == ["adk-1"]
    right = ConfirmInput(confirmation_id="adk-1", confirmed=True, call_digest=BUY_DIGEST)
    assert book.accept(right) == "accepted"


def test_ctx_f18_confirmation_reply_cannot_answer_input_request() -> None:
    """A confirmation answer addressed to an input request's id (or an input to a
    confirmation's id) is refused and answers nothing."""
    book = RequestBook()
    pending = PendingInput(kind="input", id="call-1/input-1", function_call_id="call-1", tool="buy")
    book.open(pending, InputRequest(interrupt_id="call-1/input-1", function_call_id="call-1"))
    book.open(_asked("adk-c1", "call-1"))
    confirm = ConfirmInput(confirmation_id="call-1/input-1", confirmed=True)
    problem = book.problem(confirm)
    assert isinstance(problem, UnknownRequestIdError)
    assert str(problem) == "'call-1/input-1' is an input request; answer it with adk_resume"
    assert book.accept(confirm) == "refused"
    assert book.accept(ResumeInput(interrupt_id="adk-c1", input=True)) == "refused"
    assert book.unanswered_ids() == ["call-1/input-1", "adk-c1"]
    assert not book.answered(["call-1/input-1"])
    assert not book.answered(["adk-c1"])


def test_ctx_f11_unanswered_and_take_keep_request_order() -> None:
    """Requests stay in the order they were opened, whatever order the answers come in."""
    book = RequestBook()
    for n in (1, 2, 3):
        book.open(_asked(f"adk-c{n}", f"call-{n}"))
    assert book.accept(ConfirmInput(confirmation_id="adk-c2", confirmed=True, payload=2)) == (
        "accepted"
    )
    assert book.unanswered_ids() == ["adk-c1", "adk-c3"]
    for n in (3, 1):
        book.accept(ConfirmInput(confirmation_id=f"adk-c{n}", confirmed=True, payload=n))
    assert book.open_ids() == ["adk-c1", "adk-c2", "adk-c3"]
    taken = book.take(book.open_ids())
    assert [(p.function_call_id, a) for p, a, _ in taken] == [
        (f"call-{n}", ConfirmInput(confirmation_id=f"adk-c{n}", confirmed=True, payload=n))
        for n in (1, 2, 3)
    ]
    assert book.open_ids() == []


def test_ctx_f11_an_answer_to_a_closed_request_answers_no_later_one() -> None:
    """After a request was answered and taken, answering it again changes nothing, and the
    new request the re-entered call makes waits for its own answer."""
    book = RequestBook()
    book.open(_asked("adk-c1", "call-1"))
    book.accept(ConfirmInput(confirmation_id="adk-c1", confirmed=True))
    book.take(["adk-c1"])
    again = ConfirmInput(confirmation_id="adk-c1", confirmed=True, payload="again")
    assert book.accept(again) == "duplicate"
    book.open(_asked("adk-c2", "call-1"))
    assert book.unanswered_ids() == ["adk-c2"]
    assert not book.answered(["adk-c2"])
    assert book.report() == []


def test_ctx_f11_an_early_answer_applies_only_to_its_own_id() -> None:
    """An answer that arrived before any request is kept aside; a request opening under
    another id is not answered by it."""
    book = RequestBook()
    assert book.accept(ConfirmInput(confirmation_id="adk-early", confirmed=True)) == "buffered"
    book.open(_asked("adk-c1", "call-1"))
    assert book.unanswered_ids() == ["adk-c1"]
    assert not book.answered(["adk-c1"])
    [line] = book.report()
    assert line.startswith("adk-early (confirmation, ")
    assert line.endswith("unknown id; kept until a request with this id opens")


def test_ctx_f8_an_answer_for_an_id_not_open_is_not_applied_to_another_agents_call() -> None:
    """Requests of another agent's invocation are never in this book: an answer for such an
    id is buffered, not applied to this agent's open request."""
    book = RequestBook()
    book.open(_asked("adk-mine", "call-1", agent="report_agent"))
    theirs = ConfirmInput(confirmation_id="adk-theirs", confirmed=True, call_digest=BUY_DIGEST)
    problem = book.problem(theirs)
    assert isinstance(problem, UnknownRequestIdError)
    assert str(problem) == "unknown confirmation id 'adk-theirs'; open requests: adk-mine"
    assert book.accept(theirs) == "buffered"
    assert book.unanswered_ids() == ["adk-mine"]
    assert not book.answered(["adk-mine"])


def test_ctx_f7_a_request_opened_again_stays_one_request() -> None:
    """Opening the same request again (same id, same call) keeps one request, answered and
    taken once."""
    book = RequestBook()
    book.open(_asked("adk-c1", "call-1"))
    book.open(_asked("adk-c1", "call-1"))
    assert book.open_ids() == ["adk-c1"]
    assert book.accept(ConfirmInput(confirmation_id="adk-c1", confirmed=True)) == "accepted"
    [(pending, _, _)] = book.take(["adk-c1"])
    assert pending.function_call_id == "call-1"
    assert book.accept(ConfirmInput(confirmation_id="adk-c1", confirmed=True)) == "duplicate"
