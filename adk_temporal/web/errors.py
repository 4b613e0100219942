"""Every refusal of the gateway as one JSON shape: ``{"error": {"type", "message"}}``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from temporalio.service import RPCError, RPCStatusCode

from ..answers import Refused
from ..approvals import (
    AnonymousAnswerError,
    DuplicateVoteError,
    GrantNotFoundError,
    InvalidPolicyError,
    NotAnApproverError,
    RequestClaimedError,
    SelfApprovalError,
    StaleRequestError,
)
from ..double_texting import InvalidQueuedMessageError, QueuedMessageNotFoundError
from ..errors import (
    AdkRequestError,
    BudgetExceededError,
    ConfirmationMismatchError,
    EditNotAllowedError,
    ForgottenError,
    InvalidAnswerError,
    InvalidEditError,
    InvalidIdError,
    InvalidResumeInputError,
    SessionBusyError,
    SessionNotFoundError,
    UnknownAgentError,
    UnknownRequestIdError,
)
from ..keys import CannotForgetError
from ..schedules import InvalidScheduleError, ScheduleExistsError, ScheduleNotFoundError
from ..signing import LinkError

__all__ = ["ApiError", "ErrorBody", "ErrorDocument", "api_error"]


class ErrorBody(BaseModel):
    """What went wrong: a stable machine-readable type and a sentence for people; for a
    refused answer, also the answer desk's reason (the same on every surface) and the answer
    that came first (who, when)."""

    type: str
    message: str
    reason: str | None = None
    earlier: dict[str, Any] | None = None


class ErrorDocument(BaseModel):
    """The body of every refusal."""

    error: ErrorBody


class ApiError(Exception):
    """A refusal with its HTTP status; rendered as an :class:`ErrorDocument`."""

    def __init__(
        self,
        status: int,
        type: str,
        message: str,
        headers: dict[str, str] | None = None,
        *,
        refusal: Refused | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.type = type
        self.message = message
        self.headers = headers or {}
        self.refusal = refusal

    def document(self) -> ErrorDocument:
        """The JSON body of this refusal."""
        body = ErrorBody(type=self.type, message=self.message)
        if self.refusal is not None:
            shown = self.refusal.as_json()
            body.reason, body.earlier = shown["reason"], shown["earlier"]
        return ErrorDocument(error=body)


# Most specific first: the first class the error is an instance of decides.
_REQUEST_ERRORS: list[tuple[type[Exception], int, str]] = [
    (UnknownRequestIdError, 404, "unknown_request"),
    (ConfirmationMismatchError, 409, "confirmation_mismatch"),
    (InvalidResumeInputError, 422, "invalid_input"),
    (EditNotAllowedError, 409, "edit_not_allowed"),
    (InvalidEditError, 422, "invalid_edit"),
    (InvalidAnswerError, 422, "invalid_answer"),
    (BudgetExceededError, 422, "over_budget"),
    (InvalidIdError, 422, "invalid_id"),
    (UnknownAgentError, 422, "unknown_agent"),
    (SessionBusyError, 409, "session_busy"),
    (QueuedMessageNotFoundError, 404, "queued_message_not_found"),
    (InvalidQueuedMessageError, 422, "invalid_message"),
    (ScheduleNotFoundError, 404, "schedule_not_found"),
    (ScheduleExistsError, 409, "schedule_exists"),
    (InvalidScheduleError, 422, "invalid_schedule"),
    (SessionNotFoundError, 404, "session_not_found"),
    (LinkError, 400, "invalid_link"),
    (ForgottenError, 410, "forgotten"),
    (CannotForgetError, 409, "cannot_forget"),
    (AnonymousAnswerError, 403, "anonymous"),
    (NotAnApproverError, 403, "not_an_approver"),
    (SelfApprovalError, 403, "self_approval"),
    (DuplicateVoteError, 409, "duplicate_vote"),
    (RequestClaimedError, 409, "claimed"),
    (StaleRequestError, 409, "stale"),
    (InvalidPolicyError, 422, "invalid_policy"),
    (GrantNotFoundError, 404, "unknown_grant"),
    (AdkRequestError, 400, "bad_request"),
]


def api_error(err: Exception) -> ApiError | None:
    """The refusal an expected exception stands for; ``None`` for an unexpected one."""
    if isinstance(err, ApiError):
        return err
    for kind, status, name in _REQUEST_ERRORS:
        if isinstance(err, kind):
            return ApiError(status, name, str(err))
    if isinstance(err, RPCError):
        if err.status == RPCStatusCode.NOT_FOUND:
            return ApiError(404, "not_found", err.message)
        if err.status == RPCStatusCode.UNAVAILABLE:
            return ApiError(503, "temporal_unavailable", f"Temporal is unavailable: {err.message}")
        return ApiError(502, "temporal_error", f"Temporal refused the request: {err.message}")
    return None
