"""Integers beyond 64 bits are found wherever they sit in a JSON value (edited arguments)."""

from __future__ import annotations

from typing import Any

import pytest

from adk_temporal.budgets import INT64_MAX, INT64_MIN, wide_integer


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"a": 10**30}, "$.a"),
        ({"a": [1, {"b": INT64_MAX + 1}]}, "$.a[1].b"),
        ([INT64_MIN - 1], "$[0]"),
        (2**63, "$"),
    ],
)
def test_the_first_wide_integer_is_named_by_its_path(value: Any, path: str) -> None:
    """The path of the first integer outside int64 is returned."""
    assert wide_integer(value, "$") == path


@pytest.mark.parametrize(
    "value", [{"a": INT64_MAX, "b": INT64_MIN}, [True, 1e30, "10**30"], None, {"n": -1}]
)
def test_values_within_64_bits_pass(value: Any) -> None:
    """The int64 bounds themselves, floats, strings and booleans are not wide integers."""
    assert wide_integer(value, "$") is None
