"""Notification signatures and answer links: genuine ones pass, anything altered fails."""

from __future__ import annotations

import hashlib
import hmac
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


def _verify(
    signature: str | None,
    body: bytes = b'{"a":1}',
    *,
    timestamp: str = "1000",
    idempotency_key: str | None = "n-1",
    now: float = 1010,
) -> None:
    """verify_body of a delivery, by default signed at 1000 with key n-1, checked at 1010."""
    verify_body(
        SECRET,
        signature=signature,
        timestamp=timestamp,
        idempotency_key=idempotency_key,
        body=body,
        now=now,
    )


def test_a_signed_body_verifies_and_an_altered_one_does_not() -> None:
    """The signature covers body, timestamp and idempotency key: a change to any fails it."""
    signature = sign_body(SECRET, 1000, b'{"a":1}', idempotency_key="n-1")
    _verify(signature)
    with pytest.raises(SignatureError, match="does not match"):
        _verify(signature, body=b'{"a":2}')
    with pytest.raises(SignatureError, match="does not match"):
        verify_body(
            b"other",
            signature=signature,
            timestamp="1000",
            idempotency_key="n-1",
            body=b'{"a":1}',
            now=1010,
        )
    with pytest.raises(SignatureError, match="does not match"):
        _verify("v2=é")


def test_the_signature_covers_the_idempotency_key_as_a_receiver_computes_it() -> None:
    """A receiver with the standard library alone checks HMAC-SHA256 over
    "{timestamp}.{key}.{body}"; a key changed in transit fails the signature itself."""
    body = b'{"id":"n-1"}'
    signature = sign_body(SECRET, 1000, body, idempotency_key="n-1")
    mac = hmac.new(SECRET, b"1000.n-1." + body, hashlib.sha256).hexdigest()
    assert signature == f"v2={mac}"
    for key in ("n-2", "n-1 ", "é"):
        with pytest.raises(SignatureError, match="does not match"):
            _verify(signature, body=body, idempotency_key=key)
    for missing in ("", None):
        with pytest.raises(SignatureError, match="required"):
            _verify(signature, body=body, idempotency_key=missing)
    with pytest.raises(SignatureError, match=r"'\.'"):
        _verify(signature, body=body, idempotency_key="n.1")
    with pytest.raises(ValueError, match=r"'\.'"):
        sign_body(SECRET, 1000, body, idempotency_key="n.1")


def test_an_old_or_headerless_notification_is_refused() -> None:
    """A signature older than the tolerance, a missing header or a bad timestamp fails."""
    signature = sign_body(SECRET, 1000, b"x", idempotency_key="n-1")
    with pytest.raises(SignatureError, match="signed 1000 s ago"):
        _verify(signature, body=b"x", now=2000)
    with pytest.raises(SignatureError, match="required"):
        _verify(None, body=b"x")
    with pytest.raises(SignatureError, match="POSIX seconds"):
        _verify(signature, body=b"x", timestamp="soon")


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
    return sign_body(SECRET, 1000, body, idempotency_key=notice_id), body


def _received(signature: str, key: str | None, body: bytes) -> dict[str, object]:
    """What verify_notification makes of a delivery at 1010 signed at 1000."""
    return verify_notification(
        SECRET, signature=signature, timestamp="1000", idempotency_key=key, body=body, now=1010
    )


def test_a_notification_verifies_with_its_idempotency_key_and_returns_its_document() -> None:
    """verify_notification checks the signature and that Idempotency-Key is the signed id,
    and returns the document a receiver dedupes on."""
    signature, body = _signed_notification()
    assert _received(signature, "n-1", body) == {"id": "n-1", "type": "invocation.paused"}


@pytest.mark.parametrize("key", ["n-2", "", None, "n-1 ", "é"])
def test_a_tampered_or_missing_idempotency_key_is_detected(key: str | None) -> None:
    """The signature covers the header: a changed, empty or missing Idempotency-Key is
    refused."""
    signature, body = _signed_notification()
    with pytest.raises(SignatureError, match=r"(?i)idempotency.key"):
        _received(signature, key, body)


def test_a_signed_key_that_is_not_the_documents_id_is_refused() -> None:
    """A key signed with the body but naming another notice than the body's id (a sender
    that mixed them up) is refused rather than deduped on the wrong id."""
    body = json.dumps({"id": "n-1", "type": "invocation.paused"}).encode()
    with pytest.raises(SignatureError, match="not the notification's id"):
        _received(sign_body(SECRET, 1000, body, idempotency_key="n-2"), "n-2", body)


def test_a_signed_body_that_is_not_a_notification_is_refused() -> None:
    """A genuine signature over a body without a string id (another sender of the app's
    secret, a format change) is refused rather than deduped on nothing."""
    for body in (b"[]", b'{"id": 7}', b"not json"):
        with pytest.raises(SignatureError, match="not a notification"):
            _received(sign_body(SECRET, 1000, body, idempotency_key="7"), "7", body)
