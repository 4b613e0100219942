"""Notifications out: signed webhooks when an invocation pauses for a human, or ends.

An app configures them worker-side (``App(notifications=Notifications(...))``). The first
model step of an invocation tells the workflow which events to notify (a
:class:`~adk_temporal.flow.messages.NotifyPlan` on the agent tree it describes, so the
decision is in history); the workflow then starts a child workflow ``adk_notify`` per
notification, which posts it to every endpoint with durable retries and outlives the
invocation. This module holds the configuration and the pure logic: the notification
document, its answer URLs and signed answer links, and the signed request.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal, cast, get_args
from urllib.parse import quote, urlsplit

from pydantic import BaseModel, Field

from .errors import AdkRequestError
from .flow.messages import NotifyEvent, NotifyPlan, PendingConfirmation, PendingRequest
from .signing import (
    IDEMPOTENCY_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    AnswerLink,
    sign_body,
    sign_link,
)

__all__ = [
    "SECRET_ENV",
    "Endpoint",
    "Notice",
    "NoticeDelivery",
    "NotificationConfigError",
    "Notifications",
    "endpoint_id",
    "notice_id",
    "notification_document",
    "secret_from_env",
    "signed_request",
]

SECRET_ENV = "ADK_NOTIFY_SECRET"
"""The environment variable :func:`secret_from_env` reads by default."""

_EVENTS: tuple[NotifyEvent, ...] = get_args(NotifyEvent)


class NotificationConfigError(AdkRequestError, ValueError):
    """The notifications configuration is unusable (a bad URL, an empty secret, …)."""


def _check_url(url: str, what: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise NotificationConfigError(f"{what} must be an http(s) URL, got {url!r}")


# RFC 9110's token: the characters a header name may have.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _check_header(name: str, value: str) -> None:
    # A CR or LF would end the header early and start one the endpoint never configured.
    if not _HEADER_NAME.fullmatch(name):
        raise NotificationConfigError(f"the endpoint header name {name!r} is not an HTTP token")
    if any(c in "\r\n\0" or ord(c) > 0xFF for c in value):
        # The value is often a credential: named by its header only.
        raise NotificationConfigError(
            f"the endpoint header {name!r} has a value with a line break, NUL or a character "
            "outside Latin-1"
        )


def _positive(value: timedelta, what: str) -> None:
    if value <= timedelta(0):
        raise NotificationConfigError(f"{what} must be positive, got {value}")


def endpoint_id(url: str) -> str:
    """How history names the endpoint at ``url``: a digest, never the URL itself."""
    return hashlib.sha256(url.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Endpoint:
    """A URL notifications are POSTed to, with extra headers (an API key, say).

    Raises:
        NotificationConfigError: The URL is not http(s) or not ASCII without spaces, or a
            header's name is not an HTTP token or its value holds a line break.
    """

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_url(self.url, "a notification endpoint")
        if any(not c.isascii() or not c.isprintable() or c == " " for c in self.url):
            # The request line is written from it: a space or line break would split it.
            raise NotificationConfigError(
                "a notification endpoint URL must be ASCII without spaces: percent-encode "
                "its path and write a non-ASCII host name in its xn-- form"
            )
        for name, value in self.headers.items():
            _check_header(name, value)

    def __repr__(self) -> str:
        """The endpoint's origin only: a webhook URL's path or query is often its key."""
        parts = urlsplit(self.url)
        host = parts.netloc.rpartition("@")[2]  # user:password@ is a credential too
        return f"Endpoint(url='{parts.scheme}://{host}/…', headers={len(self.headers)})"


@dataclass(frozen=True)
class Notifications:
    """Where and when an app's invocations send notifications, and how they are signed.

    Args:
        endpoints: The URLs (or :class:`Endpoint` values) every notification is posted to.
        secret: Signs the notifications and the answer links; the gateway's web server
            verifies links with the same secret (see :func:`secret_from_env`).
        answer_base_url: The gateway's public URL; the document then names the API URLs
            that answer each request and, for confirmations, signed approve/reject links.
            ``None``: no URLs in the document.
        on: The events notified: ``paused`` (a confirmation or input request opened),
            ``completed``, ``failed``.
        link_ttl: How long an answer link works, unless its request expires sooner.
        timeout: How long one delivery attempt may take in all: connecting, sending, and
            the status line and headers of the answer.
        retry_initial: The first retry's delay; each next one doubles it…
        retry_maximum: …up to this.
        give_up_after: How long a notification is retried before it is dropped.

    Raises:
        NotificationConfigError: No endpoint, a non-http URL, an empty secret, an unknown
            event, or a non-positive duration.
    """

    endpoints: Sequence[str | Endpoint]
    # repr=False: an App printed in a log or a traceback must not print the secret.
    secret: bytes = field(repr=False)
    answer_base_url: str | None = None
    on: Sequence[NotifyEvent] = ("paused",)
    link_ttl: timedelta = timedelta(days=7)
    timeout: timedelta = timedelta(seconds=10)
    retry_initial: timedelta = timedelta(seconds=1)
    retry_maximum: timedelta = timedelta(seconds=60)
    give_up_after: timedelta = timedelta(hours=24)

    def __post_init__(self) -> None:
        endpoints = tuple(e if isinstance(e, Endpoint) else Endpoint(e) for e in self.endpoints)
        if not endpoints:
            raise NotificationConfigError("notifications need at least one endpoint")
        if len({e.url for e in endpoints}) != len(endpoints):
            raise NotificationConfigError("a notification endpoint is listed twice")
        object.__setattr__(self, "endpoints", endpoints)
        if not isinstance(self.secret, bytes) or not self.secret:
            raise NotificationConfigError("the notifications secret must be non-empty bytes")
        if self.answer_base_url is not None:
            _check_url(self.answer_base_url, "answer_base_url")
            object.__setattr__(self, "answer_base_url", self.answer_base_url.rstrip("/"))
        unknown = [e for e in self.on if e not in _EVENTS]
        if unknown or not self.on:
            raise NotificationConfigError(
                f"notifications are sent on some of {list(_EVENTS)}, got {list(self.on)}"
            )
        object.__setattr__(self, "on", tuple(dict.fromkeys(self.on)))
        for name in ("link_ttl", "timeout", "retry_initial", "retry_maximum", "give_up_after"):
            _positive(getattr(self, name), name)

    def plan(self) -> NotifyPlan:
        """What the workflow needs to know: the events, the endpoints' ids, the retries."""
        return NotifyPlan(
            events=list(self.on),
            endpoints=[endpoint_id(e.url) for e in self._endpoints()],
            initial_interval_seconds=self.retry_initial.total_seconds(),
            maximum_interval_seconds=self.retry_maximum.total_seconds(),
            give_up_after_seconds=self.give_up_after.total_seconds(),
        )

    def endpoint(self, endpoint_id_: str) -> Endpoint | None:
        """The endpoint history names ``endpoint_id_``; ``None`` once it was removed."""
        return next((e for e in self._endpoints() if endpoint_id(e.url) == endpoint_id_), None)

    def _endpoints(self) -> tuple[Endpoint, ...]:
        return cast(tuple[Endpoint, ...], self.endpoints)  # made so by __post_init__


def secret_from_env(name: str = SECRET_ENV) -> bytes:
    """The notifications secret from environment variable ``name`` (UTF-8 encoded).

    Raises:
        NotificationConfigError: The variable is unset or empty.
    """
    value = os.environ.get(name, "")
    if not value:
        raise NotificationConfigError(f"set {name} to the notifications secret")
    return value.encode()


class Notice(BaseModel):
    """One notification, as the workflow decides it: the facts, no URL and no secret."""

    id: str
    event: NotifyEvent
    app_name: str
    user_id: str
    session_id: str
    workflow_id: str
    run_id: str
    invocation_id: str
    created_at: float
    """When the workflow decided it (POSIX seconds): answer links count their TTL from it."""
    requests: list[PendingRequest] = Field(default_factory=list)
    """A pause's newly opened requests (or the one a reminder is about)."""
    error: str | None = None
    """Why a failed invocation failed."""
    reason: Literal["reminded", "reassigned"] | None = None
    """Set on a pause notified again: the request was left unanswered, and its approval
    policy reminds of it (``reminded``) or moved it to another assignee (``reassigned``)."""


class NoticeDelivery(BaseModel):
    """Input of the ``adk_notify`` activity: one notice for one endpoint."""

    notice: Notice
    endpoint: str
    """The endpoint's id (:func:`endpoint_id`)."""


def notice_id(
    workflow_id: str,
    invocation_id: str,
    event: NotifyEvent,
    request_ids: list[str],
    reason: str | None = None,
) -> str:
    """The notification's id, and its idempotency key: the same on every replay and retry
    (a reminder's or a reassignment's differs from its pause's by ``reason``)."""
    key = "\n".join(
        [workflow_id, invocation_id, event, *request_ids, *([reason] if reason else [])]
    )
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _session_url(base: str, notice: Notice) -> str:
    segments = (notice.app_name, notice.user_id, notice.session_id)
    app, user, session = (quote(s, safe="") for s in segments)
    return f"{base}/v1/apps/{app}/users/{user}/sessions/{session}"


def _request(config: Notifications, notice: Notice, request: PendingRequest) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": request.id,
        "kind": request.kind,
        "tool": request.tool,
        "args": request.args,
        "agent": request.agent,
        # Both kinds' fields, empty where the kind has none: the document's shape is fixed.
        "hint": "",
        "payload": None,
        "message": "",
        "input_schema": None,
        "expires_at": request.expires_at,
        "call_digest": "",
        "assignee": request.assignee,
    }
    if isinstance(request, PendingConfirmation):
        doc.update(hint=request.hint, payload=request.payload, call_digest=request.call_digest)
    else:
        doc.update(message=request.message, input_schema=request.input_schema)
    base = config.answer_base_url
    if base is None:
        return doc
    session_url = _session_url(base, notice)
    if request.kind == "input":
        doc["answer"] = {
            "method": "POST",
            "url": f"{session_url}/resume",
            "body": {"interrupt_id": request.id, "input": None},
        }
        return doc
    doc["answer"] = {
        "method": "POST",
        "url": f"{session_url}/confirm",
        "body": {
            "confirmation_id": request.id,
            "confirmed": True,
            "call_digest": request.call_digest,
        },
    }
    expires = notice.created_at + config.link_ttl.total_seconds()
    if request.expires_at is not None:
        expires = min(expires, request.expires_at)
    doc["links"] = {
        decision: f"{base}/v1/links/"
        + sign_link(
            config.secret,
            AnswerLink(
                workflow_id=notice.workflow_id,
                invocation_id=notice.invocation_id,
                request_id=request.id,
                decision=decision,
                call_digest=request.call_digest,
                expires_at=int(expires),
            ),
        )
        for decision in ("approve", "reject")
    }
    doc["links_expire_at"] = int(expires)
    return doc


def notification_document(config: Notifications, notice: Notice) -> dict[str, Any]:
    """The JSON document posted for ``notice``; the same for the same notice and config."""
    doc: dict[str, Any] = {
        "id": notice.id,
        "type": f"invocation.{notice.event}",
        "created_at": notice.created_at,
        "app": notice.app_name,
        "user_id": notice.user_id,
        "session_id": notice.session_id,
        "workflow_id": notice.workflow_id,
        "run_id": notice.run_id,
        "invocation_id": notice.invocation_id,
    }
    if notice.event == "paused":
        doc["requests"] = [_request(config, notice, r) for r in notice.requests]
    if notice.reason is not None:
        doc["reason"] = notice.reason
    if notice.error is not None:
        doc["error"] = notice.error
    return doc


def signed_request(
    config: Notifications, endpoint: Endpoint, notice: Notice, *, now: float
) -> tuple[bytes, dict[str, str]]:
    """The body and headers of one delivery attempt of ``notice`` to ``endpoint`` at ``now``.

    The body is the same on every attempt; the signature covers it, the attempt's timestamp
    and the idempotency key header, the notice's id (which the body carries as ``id``):
    receivers dedupe on it (:func:`~adk_temporal.signing.verify_notification`).
    """
    body = json.dumps(notification_document(config, notice), separators=(",", ":")).encode()
    timestamp = int(now)
    headers = {
        **endpoint.headers,
        "Content-Type": "application/json",
        SIGNATURE_HEADER: sign_body(config.secret, timestamp, body, idempotency_key=notice.id),
        TIMESTAMP_HEADER: str(timestamp),
        IDEMPOTENCY_HEADER: notice.id,
    }
    return body, headers
