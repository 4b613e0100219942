"""Reading a client's answers from the message it sends to a task that asks.

Each answer is a data part under ``adk_answer`` (the schema each request's data part gives),
matched to one open request; a text-only message answers the task's one open input request.
Every answer of a message is checked for its shape before any is sent, so a malformed
message changes nothing; what the run itself checks (the call digest, the input schema, the
request still open) the answer desk checks as for every other surface.
"""

from __future__ import annotations

from collections.abc import Sequence

from a2a.types import Part

from .wire import ANSWER_KEY, AnswerPart, AskedRequest, answer_parts, text_of

__all__ = ["desk_answers"]


def _open_ids(requests: Sequence[AskedRequest]) -> str:
    return ", ".join(r.request_id for r in requests) or "none"


def _request_of(requests: Sequence[AskedRequest], answer: AnswerPart) -> AskedRequest:
    """The open request ``answer`` answers.

    Raises:
        ValueError: It names no open request, or names none while several are open.
    """
    if answer.request_id is None:
        if len(requests) != 1:
            raise ValueError(
                f"the task asks {len(requests)} requests ({_open_ids(requests)}): give "
                "request_id in each answer"
            )
        return requests[0]
    for request in requests:
        if request.request_id == answer.request_id:
            return request
    raise ValueError(
        f"the task asks no request {answer.request_id!r}; it asks: {_open_ids(requests)}"
    )


def _check(request: AskedRequest, answer: AnswerPart) -> None:
    """Refuse an answer of the wrong shape for ``request``.

    Raises:
        ValueError: What is missing or does not belong, naming the request.
    """
    where = f"the answer to {request.kind} request {request.request_id!r}"
    if request.kind == "confirmation":
        if answer.confirmed is None or answer.has_input:
            raise ValueError(f"{where} needs 'confirmed': true or false, and no 'input'")
        if not answer.call_digest:
            raise ValueError(
                f"{where} needs 'call_digest': the request's own, which binds the decision "
                "to the call it shows"
            )
    elif not answer.has_input or answer.confirmed is not None:
        raise ValueError(f"{where} needs 'input' (null is a value), and no 'confirmed'")


def desk_answers(
    requests: Sequence[AskedRequest], parts: Sequence[Part]
) -> list[tuple[AskedRequest, AnswerPart]]:
    """The answers a message to a task asking ``requests`` gives, each with its request.

    Raises:
        ValueError: The message answers nothing, answers a request twice or one not open,
            or an answer has the wrong shape (named in the message).
    """
    answers = answer_parts(parts)
    if not answers:
        inputs = [r for r in requests if r.kind == "input"]
        text = text_of(parts)
        if not (text and len(requests) == 1 and inputs):
            raise ValueError(
                f"the task asks {_open_ids(requests)}: answer with a data part "
                f"{{{ANSWER_KEY!r}: {{...}}}} as each request's answer_schema describes (a "
                "text message answers only a task's one open input request)"
            )
        answers = [AnswerPart(request_id=inputs[0].request_id, input=text)]
    found: list[tuple[AskedRequest, AnswerPart]] = []
    for answer in answers:
        request = _request_of(requests, answer)
        if any(r.request_id == request.request_id for r, _ in found):
            raise ValueError(f"request {request.request_id!r} is answered twice")
        _check(request, answer)
        found.append((request, answer))
    return found
