"""The API routes of approval policies: the inbox (listing, claim, release, assign), batch
answers, and standing grants (list, revoke).

Who acts is always the bearer token's holder (its principal and groups from the tokens
file), never a name in the body. Claims and assignments go through the answer desk, which
checks the run first and reports the same reasons as for answers (``claimed``,
``not_an_approver``…); the workflow stays the judge.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..answers import Refused
from ..approvals import (
    Grant,
    GrantNotFoundError,
    InboxAction,
    InboxFilter,
    InvalidPolicyError,
)
from ..approvals.inbox import MAX_CLAIM_SECONDS
from ..ids import SessionKey, workflow_id_for
from ..visibility import InvalidPageTokenError
from .body import read_model
from .caller import authorized, gateway, groups, page_size, principal, query_filter, session_of
from .errors import ApiError
from .gateway import Gateway, refusal_error
from .models import AnswerOutcome
from .openapi import Operation

__all__ = ["APPROVAL_OPERATIONS", "BatchBody", "BatchOutcome", "GrantList", "InboxList"]


class _Body(BaseModel):
    model_config = {"extra": "forbid"}


class ClaimBody(_Body):
    """Claim a request for ``seconds`` (the policy's ``claim_for`` when omitted)."""

    seconds: float | None = Field(default=None, gt=0, le=MAX_CLAIM_SECONDS)


class AssignBody(_Body):
    """Assign a request to a group or principal."""

    assignee: str


class BatchBody(_Body):
    """Approve or reject several confirmation requests of the run, each its own answer."""

    confirmed: bool
    request_ids: list[str] | None = None
    """The requests; every open confirmation of the run when omitted."""


class BatchOutcome(BaseModel):
    """Each request's outcome: ``applied``, ``accepted`` or ``refused`` (with its reason)."""

    workflow_id: str
    answers: list[dict[str, object]]


class InboxList(BaseModel):
    """A page of waiting requests as an inbox shows them, and the next page's token."""

    requests: list[dict[str, object]]
    next_page_token: str | None = None


class GrantList(BaseModel):
    """Standing grants, oldest first."""

    grants: list[Grant]


def _served(request: Request) -> tuple[Gateway, SessionKey, str, list[str]]:
    """The gateway, the path's session (the token may use its app), and who acts."""
    return gateway(request), session_of(request), principal(request), groups(request)


async def _inbox_action(
    request: Request, action: Literal["claim", "release", "assign"]
) -> Response:
    served, ids, who, in_groups = _served(request)
    seconds: float | None = None
    assignee: str | None = None
    if action == "claim":
        seconds = (await read_model(request, ClaimBody)).seconds
    elif action == "assign":
        assignee = (await read_model(request, AssignBody)).assignee
    request_id: str = request.path_params["request_id"]
    try:
        inbox = InboxAction(
            request_id=request_id,
            action=action,
            answered_by=who,
            groups=in_groups,
            channel="gateway",
            seconds=seconds,
            assignee=assignee,
        )
    except InvalidPolicyError as err:
        raise ApiError(422, "invalid_policy", str(err)) from None
    workflow_id = workflow_id_for(ids)
    outcome = await served.desk.inbox(workflow_id, inbox, wait=served.answer_wait)
    if isinstance(outcome, Refused):
        raise refusal_error(outcome)
    reply = AnswerOutcome(workflow_id=workflow_id, request_id=request_id, outcome=outcome.kind)
    return JSONResponse(reply.model_dump(mode="json"), 200 if outcome.kind == "applied" else 202)


async def claim(request: Request) -> Response:
    """``POST {session}/requests/{request_id}/claim``."""
    return await _inbox_action(request, "claim")


async def release(request: Request) -> Response:
    """``POST {session}/requests/{request_id}/release``."""
    return await _inbox_action(request, "release")


async def assign(request: Request) -> Response:
    """``POST {session}/requests/{request_id}/assign``."""
    return await _inbox_action(request, "assign")


async def confirm_batch(request: Request) -> Response:
    """``POST {session}/confirm-batch``: each request answered as the token's holder."""
    served, ids, who, in_groups = _served(request)
    body = await read_model(request, BatchBody)
    workflow_id = workflow_id_for(ids)
    outcomes = await served.desk.confirm_batch(
        workflow_id,
        body.confirmed,
        body.request_ids,
        answered_by=who,
        groups=in_groups,
        channel="gateway",
        policy="update_first",
        wait=served.answer_wait,
    )
    answers = [
        {"request_id": rid, "outcome": o.kind, **(o.as_json() if isinstance(o, Refused) else {})}
        for rid, o in outcomes
    ]
    reply = BatchOutcome(workflow_id=workflow_id, answers=answers)
    return JSONResponse(reply.model_dump(mode="json"))


def _flag(request: Request, name: str) -> bool | None:
    value = request.query_params.get(name)
    if value is None:
        return None
    if value not in ("true", "false"):
        raise ApiError(422, "invalid_query", f"{name} must be true or false")
    return value == "true"


async def inbox(request: Request) -> Response:
    """``GET /v1/apps/{app}/inbox``: a page of waiting requests as the token's holder sees
    them (others' claims hidden unless ``claimed`` is given)."""
    app = authorized(request)
    view = InboxFilter(
        assignee=request.query_params.getlist("assignee"),
        claimed=_flag(request, "claimed"),
        overdue=bool(_flag(request, "overdue")),
        viewer=principal(request),
    )
    try:
        rows, token = await gateway(request).adk.inbox_page(
            view,
            app_name=app,
            user_id=query_filter(request, "user_id"),
            page_size=page_size(request, "50"),
            page_token=request.query_params.get("page_token") or None,
        )
    except InvalidPageTokenError as err:
        raise ApiError(400, "invalid_page_token", str(err)) from err
    listed = [{"workflow_id": w, **r.model_dump(mode="json")} for w, r in rows]
    return JSONResponse(InboxList(requests=listed, next_page_token=token).model_dump(mode="json"))


async def session_grants(request: Request) -> Response:
    """``GET {session}/grants``: the grants the session's calls may use."""
    served, ids, _, _ = _served(request)
    found = await served.grants(ids.app_name, ids.user_id, ids.session_id)
    return JSONResponse(GrantList(grants=found).model_dump(mode="json"))


async def revoke(request: Request) -> Response:
    """``POST /v1/apps/{app}/grants/{grant_id}/revoke``, as the token's holder."""
    app = authorized(request)
    served = gateway(request)
    if served.sessions is None:
        raise ApiError(503, "no_session_store", "this gateway has no session store")
    try:
        revoked = await served.sessions.revoke_grant(
            app, request.path_params["grant_id"], by=principal(request), now=time.time()
        )
    except GrantNotFoundError as err:
        raise ApiError(404, "unknown_grant", str(err)) from None
    return JSONResponse(revoked.model_dump(mode="json"))


_REQUEST = "/v1/apps/{app}/users/{user}/sessions/{session}/requests/{request_id}"
_SESSION = "/v1/apps/{app}/users/{user}/sessions/{session}"

APPROVAL_OPERATIONS = [
    Operation(
        "GET",
        "/v1/apps/{app}/inbox",
        inbox,
        "The waiting requests as the token's holder's inbox (Temporal visibility and memos)",
        reply=InboxList,
        errors=(400, 422),
        query=(
            ("assignee", "only requests assigned to this group or principal (repeatable)"),
            ("claimed", "true: only claimed ones; false: only unclaimed ones"),
            ("overdue", "true: only requests past their due time"),
            ("user_id", "only this user's (tenant's) runs"),
            ("page_size", "a page of at most this many runs, 1 to 1000 (default 50)"),
            ("page_token", "the next_page_token of the previous page"),
        ),
    ),
    Operation(
        "POST",
        f"{_REQUEST}/claim",
        claim,
        "Claim a waiting request: others' answers are refused (409 claimed) until released",
        body=ClaimBody,
        reply=AnswerOutcome,
        replies=(200, 202),
        errors=(403, 404, 409, 422),
    ),
    Operation(
        "POST",
        f"{_REQUEST}/release",
        release,
        "Release your claim on a waiting request",
        reply=AnswerOutcome,
        replies=(200, 202),
        errors=(404, 409),
    ),
    Operation(
        "POST",
        f"{_REQUEST}/assign",
        assign,
        "Assign a waiting request to a group or principal (its inbox; the policy still says "
        "who may answer)",
        body=AssignBody,
        reply=AnswerOutcome,
        replies=(200, 202),
        errors=(404, 409, 422),
    ),
    Operation(
        "POST",
        f"{_SESSION}/confirm-batch",
        confirm_batch,
        "Approve or reject several (or every open) confirmation requests, each its own answer",
        body=BatchBody,
        reply=BatchOutcome,
        errors=(400, 404, 413, 422),
    ),
    Operation(
        "GET",
        f"{_SESSION}/grants",
        session_grants,
        "The standing grants the session's calls may use",
        reply=GrantList,
    ),
    Operation(
        "POST",
        "/v1/apps/{app}/grants/{grant_id}/revoke",
        revoke,
        "Revoke a standing grant: later calls pause for approval as before",
        reply=Grant,
        errors=(404, 503),
    ),
]
"""The approval routes, in the order the OpenAPI document lists them."""
