"""HMAC signatures for notifications sent out and answer links handed out.

Both directions share one secret per app. A notification is signed over its timestamp, its
``Idempotency-Key`` and its body (``v2=`` + hex HMAC-SHA256 of
``"{timestamp}.{idempotency key}.{body}"``), so a receiver needs ten lines of standard
library to check it, and a key changed in transit fails the signature: a receiver may dedupe
on the header. (``v1``, before 2026-12, signed ``"{timestamp}.{body}"`` only and is no
longer accepted.) The key is also the signed body's ``id``; :func:`verify_notification`
checks both and returns the document.

An answer link is a self-contained token: the decision it carries and its expiry are
signed, so a tampered, expired or foreign link is refused without any server-side table;
that it works once is enforced by the run itself, which refuses an answer to a request that
is no longer open.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from .errors import AdkRequestError

__all__ = [
    "IDEMPOTENCY_HEADER",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "AnswerLink",
    "LinkError",
    "SignatureError",
    "read_link",
    "same_text",
    "sign_body",
    "sign_link",
    "verify_body",
    "verify_notification",
]

SIGNATURE_HEADER = "X-Adk-Signature"
"""The header carrying ``v2=<hex HMAC-SHA256 of "{timestamp}.{idempotency key}.{body}">``."""
TIMESTAMP_HEADER = "X-Adk-Timestamp"
"""The header carrying the POSIX seconds the signature was made at."""
IDEMPOTENCY_HEADER = "Idempotency-Key"
"""The header carrying one key per notification, the same on every delivery attempt: the
body's ``id``; the signature covers it."""

_VERSION = "v2"


class SignatureError(AdkRequestError, ValueError):
    """A notification's signature is missing, malformed, wrong, or too old."""


class LinkError(AdkRequestError, ValueError):
    """An answer link is malformed, tampered with, or expired."""


def same_text(given: str, expected: str) -> bool:
    """Constant-time equality of a received credential and the expected one; any characters
    (``hmac.compare_digest`` refuses non-ASCII ``str``, which a client may send)."""
    return hmac.compare_digest(given.encode(), expected.encode())


def _mac(secret: bytes, message: bytes) -> str:
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def sign_body(secret: bytes, timestamp: int, body: bytes, *, idempotency_key: str) -> str:
    """The signature header value for ``body`` sent at ``timestamp`` (POSIX seconds) with
    ``idempotency_key`` (which holds no ``.``, so the signed text splits one way only).

    Raises:
        ValueError: The key is empty or holds a ``.``.
    """
    if not idempotency_key or "." in idempotency_key:
        raise ValueError(f"an idempotency key is non-empty without '.', got {idempotency_key!r}")
    signed = f"{timestamp}.{idempotency_key}.".encode() + body
    return f"{_VERSION}={_mac(secret, signed)}"


def verify_body(
    secret: bytes,
    *,
    signature: str | None,
    timestamp: str | None,
    idempotency_key: str | None,
    body: bytes,
    now: float,
    tolerance_seconds: float = 300.0,
) -> None:
    """Check a received notification; return quietly when it is genuine and fresh.

    Raises:
        SignatureError: A header is missing or malformed, the signature does not match
            (the body, the timestamp or the idempotency key was changed), or the timestamp
            is more than ``tolerance_seconds`` away from ``now`` (a replay).
    """
    if not signature or not timestamp or not idempotency_key:
        raise SignatureError(
            f"the {SIGNATURE_HEADER}, {TIMESTAMP_HEADER} and {IDEMPOTENCY_HEADER} headers are "
            "required"
        )
    if "." in idempotency_key:
        raise SignatureError(f"the {IDEMPOTENCY_HEADER} header holds a '.', which none does")
    try:
        sent = int(timestamp)
    except ValueError:
        raise SignatureError(
            f"{TIMESTAMP_HEADER} must be POSIX seconds, got {timestamp!r}"
        ) from None
    if abs(now - sent) > tolerance_seconds:
        raise SignatureError(
            f"the notification was signed {now - sent:.0f} s ago; at most "
            f"{tolerance_seconds:.0f} s is accepted"
        )
    expected = sign_body(secret, sent, body, idempotency_key=idempotency_key)
    if not same_text(signature, expected):
        raise SignatureError("the signature does not match the body and idempotency key")


def verify_notification(
    secret: bytes,
    *,
    signature: str | None,
    timestamp: str | None,
    idempotency_key: str | None,
    body: bytes,
    now: float,
    tolerance_seconds: float = 300.0,
) -> dict[str, Any]:
    """Check a received notification and return its document; dedupe on the document's ``id``.

    Args:
        secret: The app's notifications secret.
        signature: The :data:`SIGNATURE_HEADER` header.
        timestamp: The :data:`TIMESTAMP_HEADER` header.
        idempotency_key: The :data:`IDEMPOTENCY_HEADER` header.
        body: The request body, as received.
        now: The receiver's clock (POSIX seconds).
        tolerance_seconds: How old a signature may be.

    Returns:
        The notification document, whose ``id`` is the signed idempotency key.

    Raises:
        SignatureError: As :func:`verify_body`; or the body is not a notification document;
            or the idempotency key is not its ``id``.
    """
    verify_body(
        secret,
        signature=signature,
        timestamp=timestamp,
        idempotency_key=idempotency_key,
        body=body,
        now=now,
        tolerance_seconds=tolerance_seconds,
    )
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        doc = None
    if not isinstance(doc, dict) or not isinstance(doc.get("id"), str):
        raise SignatureError("the signed body is not a notification document with an id")
    if idempotency_key is None or not same_text(idempotency_key, doc["id"]):
        raise SignatureError(f"the {IDEMPOTENCY_HEADER} header is not the notification's id")
    return doc


class AnswerLink(BaseModel):
    """What a signed answer link decides: one answer to one request of one run."""

    workflow_id: str
    invocation_id: str
    request_id: str
    decision: Literal["approve", "reject"]
    call_digest: str = ""
    expires_at: int
    """POSIX seconds after which the link is refused."""
    recipient: str | None = None
    """Who the link was made for: its answer is recorded as theirs (an approval policy
    counting principals refuses a link that names nobody)."""
    groups: list[str] = Field(default_factory=list)
    """The recipient's groups, as a policy's approvers name them."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign_link(secret: bytes, link: AnswerLink) -> str:
    """The URL-safe token for ``link``: its fields and their signature."""
    # A link naming no recipient is signed as links were before recipients existed.
    unnamed = {"recipient", "groups"} if not link.recipient and not link.groups else set()
    body = _b64(json.dumps(link.model_dump(mode="json", exclude=unnamed), sort_keys=True).encode())
    return f"{body}.{_mac(secret, body.encode())}"


def read_link(secret: bytes, token: str, *, now: float) -> AnswerLink:
    """The link a token carries, once its signature and expiry are checked.

    Raises:
        LinkError: The token is malformed, its signature does not match (tampered, or
            signed with another secret), or it expired.
    """
    body, sep, mac = token.partition(".")
    if not sep or not body or not mac:
        raise LinkError("the answer link is malformed")
    if not same_text(mac, _mac(secret, body.encode())):
        raise LinkError("the answer link's signature does not match")
    try:
        link = AnswerLink.model_validate_json(_unb64(body))
    except (ValidationError, binascii.Error, ValueError) as err:
        raise LinkError(f"the answer link does not decode: {err}") from None
    if now > link.expires_at:
        raise LinkError("the answer link expired")
    return link
