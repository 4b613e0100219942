"""Notification signatures and answer links: genuine ones pass, anything altered fails."""

from __future__ import annotations

import pytest

from adk_temporal.signing import (
    AnswerLink,
    LinkError,
    SignatureError,
    read_link,
    sign_body,
    sign_link,
    verify_body,
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
