"""What the answer desk decided about one answer: applied, accepted, or refused with a reason.

Every surface (the JSON API, the CLI, the console, answer links, ``chat``) receives one of
these and only translates it: an HTTP status and error type, a CLI error and hint, a page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypeAlias

from ..errors import AdkRequestError

__all__ = [
    "Accepted",
    "AnswerRefusedError",
    "Applied",
    "DeliveryPolicy",
    "EarlierAnswer",
    "Outcome",
    "RefusalReason",
    "Refused",
    "raise_if_refused",
]

DeliveryPolicy: TypeAlias = Literal["update_first", "check_first"]
"""How the desk sends an answer. ``update_first``: the checked update goes at once and the
run is read only when no worker takes it within a moment (the gateway: with a worker
running an answer costs one call to Temporal, as a bare signal does). ``check_first``: the
run is read before anything is sent (a person at a terminal waits on a refusal either way,
and hears who answered first)."""

RefusalReason: TypeAlias = Literal[
    "not_open",
    "wrong_kind",
    "already_answered",
    "expired",
    "held",
    "run_closed",
    "no_run",
    "wrong_run",
    "invalid",
    "anonymous",
    "not_an_approver",
    "self_approval",
    "duplicate_vote",
    "claimed",
    "stale",
]
"""Why an answer was refused, the same on every surface:

- ``not_open``: the run has no such open request (and never had an answer to it);
- ``wrong_kind``: the id is open, as a request of the other kind;
- ``already_answered``: the run took an answer to it before (who and when in ``earlier``);
- ``expired``: the request's deadline passed unanswered;
- ``held``: Temporal holds another answer to it that no worker has taken yet (``earlier``);
- ``run_closed``: the run closed (before, or while the answer was sent);
- ``no_run``: there is no such run;
- ``wrong_run``: the answer (a link) names another invocation of the workflow;
- ``invalid``: the answer itself is refused (malformed, over budget, another call's digest,
  a schema violation, edits the tool does not take); ``error`` has the typed error.

And the refusals of an approval policy or an inbox claim (``error`` has the typed
:class:`~adk_temporal.approvals.PolicyRefusalError`):

- ``anonymous``: the request's policy counts who answers, and the answer names nobody;
- ``not_an_approver``: the principal is none of the policy's approvers, nor in their groups;
- ``self_approval``: the principal started the invocation (or is its session's user) and
  the policy keeps requesters from approving;
- ``duplicate_vote``: the principal voted on the request already (``earlier`` is none: the
  message says when and how);
- ``claimed``: another approver holds a claim on the request (the message names them and
  until when);
- ``stale``: the request was re-opened under a new id (its approval went stale); answer that.
"""


@dataclass(frozen=True)
class EarlierAnswer:
    """An answer the run already has (or Temporal holds for it), as its history shows it.

    Args:
        decision: ``approved``, ``rejected`` or ``answered`` (an input).
        at: When Temporal recorded it.
        answered_by: Who answered, as the sending surface authenticated them (``None``:
            not said).
        channel: How it came (``cli``, ``gateway``, ``link``…), else how it reached the run
            (``signal`` or ``update``).
        sender: The identity of the client that sent it, as Temporal recorded it.
    """

    decision: str
    at: datetime
    answered_by: str | None
    channel: str
    sender: str

    def describe(self) -> str:
        """One clause: what was answered, when, by whom, how."""
        who = self.answered_by or (f"client {self.sender}" if self.sender else "")
        by = f" by {who}" if who else ""
        return f"{self.decision} at {self.at:%Y-%m-%d %H:%M:%S} UTC{by} (through {self.channel})"

    def as_json(self) -> dict[str, Any]:
        """The answer as surfaces print it in JSON."""
        return {
            "decision": self.decision,
            "at": self.at.isoformat(),
            "answered_by": self.answered_by,
            "channel": self.channel,
        }


@dataclass(frozen=True)
class Applied:
    """A worker checked the answer and the run applied it."""

    kind: Literal["applied"] = "applied"


@dataclass(frozen=True)
class Accepted:
    """Temporal holds the answer (a signal) until a worker picks the run up; the run then
    checks it, and lists it under its refused answers if it does not fit."""

    kind: Literal["accepted"] = "accepted"


@dataclass(frozen=True)
class Refused:
    """The answer was not applied and will not be: why, in words, and what came first.

    Args:
        reason: Why, the same on every surface (:data:`RefusalReason`).
        message: One sentence naming the run, the request and the reason.
        earlier: The answer that came first (``already_answered``, ``held``).
        error: The typed error behind an ``invalid`` answer (or a worker's refusal).
    """

    reason: RefusalReason
    message: str
    earlier: EarlierAnswer | None = None
    error: AdkRequestError | None = None
    kind: Literal["refused"] = "refused"

    def as_json(self) -> dict[str, Any]:
        """The refusal as surfaces print it in JSON."""
        return {
            "reason": self.reason,
            "message": self.message,
            "earlier": self.earlier.as_json() if self.earlier is not None else None,
        }


Outcome: TypeAlias = Applied | Accepted | Refused
"""What happened to an answer."""


class AnswerRefusedError(AdkRequestError):
    """The answer desk refused an answer (for callers that take refusals as exceptions)."""

    def __init__(self, refusal: Refused) -> None:
        super().__init__(f"{refusal.message} [{refusal.reason}]")
        self.refusal = refusal


def raise_if_refused(outcome: Outcome) -> Applied | Accepted:
    """``outcome`` unless it is a refusal: an invalid answer's own typed error is raised
    (a schema violation, a digest mismatch…), any other refusal as
    :class:`AnswerRefusedError`."""
    if not isinstance(outcome, Refused):
        return outcome
    if outcome.reason == "invalid" and outcome.error is not None:
        raise outcome.error
    raise AnswerRefusedError(outcome)
