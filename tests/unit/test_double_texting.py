"""The queue a busy session keeps for messages sent meanwhile, and what a sender may send."""

from __future__ import annotations

import pytest
from google.genai import types

from adk_temporal.budgets import Budgets
from adk_temporal.double_texting import (
    MAX_QUEUED,
    MAX_QUEUED_BYTES,
    InvalidDoubleTextingError,
    MessageQueue,
    QueuedMessage,
    QueuedMessageNotFoundError,
    QueueFullError,
    double_texting_policy,
    message_problem,
)
from adk_temporal.double_texting.policy import DoubleTexting
from adk_temporal.errors import SessionBusyError


def _message(invocation_id: str, policy: DoubleTexting | None = "enqueue") -> QueuedMessage:
    content = types.Content(role="user", parts=[types.Part(text=f"hello {invocation_id}")])
    return QueuedMessage(
        invocation_id=invocation_id, agent_name="a", message=content, policy=policy
    )


def test_messages_wait_in_the_order_sent_and_a_resend_is_not_queued_twice() -> None:
    """Each message gets the next position; the same invocation id again keeps its place."""
    queue = MessageQueue()
    assert queue.add(_message("e-1")) == (1, [])
    assert queue.add(_message("e-2")) == (2, [])
    assert queue.add(_message("e-1")) == (1, [])
    assert [s.invocation_id for s in queue.summaries()] == ["e-1", "e-2"]
    assert queue.pop() is not None and queue.position("e-2") == 1


def test_an_interrupt_or_rollback_withdraws_the_earlier_messages_and_runs_next() -> None:
    """As LangGraph cancels a thread's pending runs for it: the stopping message supersedes
    what waited, and says the running invocation must stop."""
    queue = MessageQueue([_message("e-1"), _message("e-2")])
    assert queue.stopping() is None
    position, superseded = queue.add(_message("e-3", "rollback"))
    assert position == 1 and [m.invocation_id for m in superseded] == ["e-1", "e-2"]
    assert queue.stopping() == "rollback"
    assert queue.add(_message("e-4")) == (2, [])
    assert queue.stopping() == "rollback"


def test_the_queue_is_bounded_but_a_stopping_message_always_gets_in() -> None:
    """Past MAX_QUEUED an enqueued message is refused as a busy session; an interrupt
    replaces the queue."""
    queue = MessageQueue([_message(f"e-{n}") for n in range(MAX_QUEUED)])
    with pytest.raises(QueueFullError, match=str(MAX_QUEUED)) as refused:
        queue.add(_message("e-late"))
    assert isinstance(refused.value, SessionBusyError)
    assert queue.add(_message("e-now", "interrupt"))[0] == 1 and len(queue) == 1


def test_the_queue_is_bounded_in_bytes_so_it_always_fits_a_run_input() -> None:
    """Past MAX_QUEUED_BYTES of messages a message is refused, and so is one larger alone:
    the queue travels whole in the input of the next run."""
    big = types.Content(role="user", parts=[types.Part(text="b" * (300 * 1024))])
    queue = MessageQueue()
    for n in range(3):
        queue.add(QueuedMessage(invocation_id=f"e-{n}", agent_name="a", message=big))
    with pytest.raises(QueueFullError, match="bytes of messages"):
        queue.add(QueuedMessage(invocation_id="e-3", agent_name="a", message=big))
    huge = types.Content(role="user", parts=[types.Part(text="h" * MAX_QUEUED_BYTES)])
    with pytest.raises(QueueFullError, match="too large to queue"):
        MessageQueue().add(QueuedMessage(invocation_id="e-h", agent_name="a", message=huge))
    assert queue.size() <= MAX_QUEUED_BYTES


def test_withdrawing_takes_one_message_out_and_an_unknown_id_is_a_typed_error() -> None:
    """A withdrawn message leaves; the ones behind move up; withdrawing it again fails."""
    queue = MessageQueue([_message("e-1"), _message("e-2")])
    assert queue.withdraw("e-1").invocation_id == "e-1"
    assert queue.position("e-2") == 1
    with pytest.raises(QueuedMessageNotFoundError, match="e-1"):
        queue.withdraw("e-1")


def test_a_summary_shows_the_start_of_the_text_and_the_size_never_the_whole() -> None:
    """The memo and ``show`` list a preview of 200 characters and the size in bytes."""
    long = types.Content(role="user", parts=[types.Part(text="x" * 1000)])
    summary = QueuedMessage(invocation_id="e-1", agent_name="a", message=long).summary(1)
    assert summary.preview == "x" * 200 and summary.size > 1000
    assert summary.policy == "enqueue"


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({"agent_name": "a"}, "invocation_id"),
        ({"invocation_id": "../etc", "agent_name": "a"}, "invocation_id"),
        ({"invocation_id": "e-1", "agent_name": "a/b"}, "agent_name"),
        ({"invocation_id": "e-1", "agent_name": ""}, "agent_name is missing"),
        ({"invocation_id": "e-1", "agent_name": "a", "policy": "shout"}, "policy"),
        (
            {
                "invocation_id": "e-1",
                "agent_name": "a",
                "message": {"role": "user", "parts": [{"text": "y" * 300}]},
            },
            "over the message_bytes budget of 100",
        ),
        ("not an object", "malformed"),
    ],
)
def test_a_malformed_or_oversized_message_is_refused_naming_the_field(
    raw: object, problem: str
) -> None:
    """What a sender sends is any JSON: the run refuses it with the field named."""
    message, why = message_problem(raw, Budgets(message_bytes=100))
    assert message is None and why is not None and problem in why


def test_a_well_formed_message_is_taken() -> None:
    """A message within its budget, with a sound id, comes back as a model."""
    raw = {"invocation_id": "e-1", "agent_name": "a", "policy": "interrupt"}
    message, why = message_problem(raw, Budgets())
    assert why is None and message is not None and message.policy == "interrupt"


def test_a_policy_is_one_of_four_names() -> None:
    """Policies are LangGraph's four names; another is a typed error listing them."""
    assert double_texting_policy("enqueue") == "enqueue"
    with pytest.raises(InvalidDoubleTextingError, match="reject, enqueue, interrupt, rollback"):
        double_texting_policy("queue")
