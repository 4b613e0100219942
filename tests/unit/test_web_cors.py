"""Which browser origins the gateway accepts as configuration."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from adk_temporal.cli import main
from adk_temporal.web.cors import CorsOriginError, checked_origin, cors_options


@pytest.mark.parametrize(
    ("given", "sent_by_browsers"),
    [
        ("https://tickets.example.com", "https://tickets.example.com"),
        ("https://Tickets.Example.com/", "https://tickets.example.com"),
        ("http://127.0.0.1:8081", "http://127.0.0.1:8081"),
        ("http://[::1]:3000", "http://[::1]:3000"),
        ("*", "*"),
    ],
)
def test_an_origin_is_kept_as_browsers_send_it(given: str, sent_by_browsers: str) -> None:
    assert checked_origin(given) == sent_by_browsers


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ("tickets.example.com", "must start with http"),
        ("ftp://tickets.example.com", "must start with http"),
        ("https://", "has no host"),
        ("https://tickets.example.com/app", "scheme://host"),
        ("https://tickets.example.com?x=1", "scheme://host"),
        ("https://user@tickets.example.com", "scheme://host"),
        ("https://tickets.example.com:99999", "invalid port"),
    ],
)
def test_a_malformed_origin_is_refused_by_name(given: str, problem: str) -> None:
    with pytest.raises(CorsOriginError, match=problem) as caught:
        checked_origin(given)
    assert repr(given) in str(caught.value)


def test_credentials_are_never_allowed_cross_origin() -> None:
    options = cors_options(["https://tickets.example.com"])
    assert options["allow_credentials"] is False
    assert options["allow_origins"] == ["https://tickets.example.com"]
    assert "Authorization" in options["allow_headers"]


def test_the_command_refuses_a_bad_origin_before_connecting() -> None:
    result = CliRunner().invoke(
        main, ["web", "--address", "127.0.0.1:1", "--cors-origin", "tickets.example.com"]
    )
    assert result.exit_code == 2
    assert "--cors-origin" in result.output
    assert "'tickets.example.com' must start with http" in result.output
