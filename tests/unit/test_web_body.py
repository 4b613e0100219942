"""Reading the gateway's JSON bodies: anything that is not strict, bounded JSON is a 400."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.requests import Request
from starlette.types import Message

from adk_temporal.web.body import MAX_JSON_DEPTH, read_model
from adk_temporal.web.errors import ApiError
from adk_temporal.web.models import ConfirmBody, StartRunBody


def _request(body: bytes) -> Request:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    scope: dict[str, Any] = {
        "type": "http",
        "method": "POST",
        "path": "/",
        "headers": [(b"content-type", b"application/json")],
    }
    return Request(scope, receive)


def _payload(raw: str) -> bytes:
    return b'{"confirmation_id": "adk-1", "confirmed": true, "payload": ' + raw.encode() + b"}"


async def _refusal(body: bytes) -> ApiError:
    with pytest.raises(ApiError) as caught:
        await read_model(_request(body), ConfirmBody)
    return caught.value


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested"),
        ("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1), f"{MAX_JSON_DEPTH} levels"),
        ('{"a": ' * 5000 + "1" + "}" * 5000, "nested"),
        ("9" * 5000, "digits"),
        ("-" + "9" * 5000, "digits"),
    ],
    ids=["deep-array", "just-too-deep", "deep-object", "huge-int", "huge-negative-int"],
)
async def test_deep_nesting_and_huge_integers_are_a_400_not_a_failure(raw: str, named: str) -> None:
    """What json.loads answers with RecursionError or ValueError is refused as invalid JSON
    naming the problem, never left to become a 500."""
    refused = await _refusal(_payload(raw))
    assert (refused.status, refused.type) == (400, "invalid_json")
    assert named in refused.message


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "[1, NaN]"])
async def test_non_finite_numbers_are_refused_anywhere_in_a_body(raw: str) -> None:
    """NaN, the infinities and a number that overflows to infinity are not JSON: 400, never
    an answer that crosses Temporal as non-standard JSON."""
    refused = await _refusal(_payload(raw))
    assert (refused.status, refused.type) == (400, "invalid_json")
    assert "NaN or infinite" in refused.message


async def test_a_non_finite_number_is_refused_outside_the_payload_too() -> None:
    """A constant in any field is refused as invalid JSON before the model is checked."""
    body = b'{"agent": "a", "user_id": "u", "message": "m", "extra": NaN}'
    with pytest.raises(ApiError) as caught:
        await read_model(_request(body), StartRunBody)
    assert (caught.value.status, caught.value.type) == (400, "invalid_json")


async def test_strict_bounded_json_is_read_as_the_model() -> None:
    """Large finite numbers, long integers under the limit and nesting up to the bound pass."""
    nested = "[" * (MAX_JSON_DEPTH - 2) + "]" * (MAX_JSON_DEPTH - 2)
    payload = f'{{"big": 1e308, "small": -1e-308, "int": {"9" * 4000}, "deep": {nested}}}'
    read = await read_model(_request(_payload(payload)), ConfirmBody)
    assert read.payload["big"] == 1e308
    assert read.payload["int"] == int("9" * 4000)
