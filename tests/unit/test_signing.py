"""Notification signatures and answer links: genuine ones pass, anything altered fails."""

from __future__ import annotations

import json

import pytest

from adk_temporal.signing import (
    AnswerLink,
    LinkError,
    SignatureError,
    read_link,
    sign_body,
    sign_link,
    verify_body,
    verify_notification,
)

SECRET = b"s3cret"


def test_a_signed_body_verifies_and_an_altered_one_does_not() -> None:
    signature = sign_body(SECRET, 1000, b'{"a":1}')
    verify_body(SECRET, signature=signature, timestamp="1000", body=b'{"a":1}', now=1010)
    with pytest.raises(SignatureError, match="does not match"):
        verify_body(SECRET, signature=signature, timestamp="1000", body=b'{"a":2}', now=1010)
    with pytest.raises(SignatureError, match="does not match"):
        verify_body(b"other", signature=signature, timestamp="1000", body=b'{"a":1}', now=1010)
    with pytest.raises(SignatureError, match="does not match"):
        verify_body(SECRET, signature="v1=é", timestamp="1000", body=b'{"a":1}', now=1010)


def test_an_old_or_headerless_notification_is_refused() -> None:
    signature = sign_body(SECRET, 1000, b"x")
    with pytest.raises(SignatureError, match="signed 1000 s ago"):
        verify_body(SECRET, signature=signature, timestamp="1000", body=b"x", now=2000)
    with pytest.raises(SignatureError, match="required"):
        verify_body(SECRET, signature=None, timestamp="1000", body=b"x", now=1000)
    with pytest.raises(SignatureError, match="POSIX seconds"):
        verify_body(SECRET, signature=signature, timestamp="soon", body=b"x", now=1000)


def _link(**changes: object) -> AnswerLink:
    fields: dict[str, object] = {
        "workflow_id": "adk/app/u/s",
        "invocation_id": "e-1",
        "request_id": "adk-1",
        "decision": "approve",
        "expires_at": 2000,
    }
    return AnswerLink.model_validate(fields | changes)


def test_a_link_round_trips_until_it_expires() -> None:
    token = sign_link(SECRET, _link())
    assert read_link(SECRET, token, now=1999) == _link()
    with pytest.raises(LinkError, match="expired"):
        read_link(SECRET, token, now=2001)


def test_a_tampered_or_foreign_link_is_refused() -> None:
    token = sign_link(SECRET, _link())
    body, _, mac = token.partition(".")
    forged = sign_link(SECRET, _link(decision="reject")).partition(".")[0]
    with pytest.raises(LinkError, match="signature"):
        read_link(SECRET, f"{forged}.{mac}", now=1000)
    with pytest.raises(LinkError, match="signature"):
        read_link(b"other", token, now=1000)
    with pytest.raises(LinkError, match="malformed"):
        read_link(SECRET, body, now=1000)
    with pytest.raises(LinkError, match="signature"):
        read_link(SECRET, f"{body}.é", now=1000)


def _signed_notification(notice_id: str = "n-1") -> tuple[str, bytes]:
    body = json.dumps({"id": notice_id, "type": "invocation.paused"}).encode()
    return sign_body(SECRET, 1000, body), body


def test_a_notification_verifies_with_its_idempotency_key_and_returns_its_document() -> None:
    """verify_notification checks the signature and that Idempotency-Key is the signed id,
    and returns the document a receiver dedupes on."""
    signature, body = _signed_notification()
    doc = verify_notification(
        SECRET,
        signature=signature,
        timestamp="1000",
        idempotency_key="n-1",
        body=body,
        now=1010,
    )
    assert doc == {"id": "n-1", "type": "invocation.paused"}


@pytest.mark.parametrize("key", ["n-2", "", None, "n-1 ", "é"])
def test_a_tampered_or_missing_idempotency_key_is_detected(key: str | None) -> None:
    """The signature does not cover the header, so the header must equal the signed id: a
    changed, empty or missing Idempotency-Key is refused."""
    signature, body = _signed_notification()
    with pytest.raises(SignatureError, match="Idempotency-Key"):
        verify_notification(
            SECRET,
            signature=signature,
            timestamp="1000",
            idempotency_key=key,
            body=body,
            now=1010,
        )


def test_a_signed_body_that_is_not_a_notification_is_refused() -> None:
    """A genuine signature over a body without a string id (another sender of the app's
    secret, a format change) is refused rather than deduped on nothing."""
    for body in (b"[]", b'{"id": 7}', b"not json"):
        with pytest.raises(SignatureError, match="not a notification"):
            verify_notification(
                SECRET,
                signature=sign_body(SECRET, 1000, body),
                timestamp="1000",
                idempotency_key="7",
                body=body,
                now=1010,
            )
