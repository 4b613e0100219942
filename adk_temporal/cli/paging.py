"""Paging options of the listings that grow with the number of runs (``list``, ``pending``).

A listing reads Temporal's visibility one page at a time and prints each page as it
arrives, so no command holds every run in memory however many wait.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any

import click

from ..visibility import MAX_PAGE_SIZE
from .common import F, console

__all__ = ["Paging", "echo_json_stream", "page_options", "paging_of", "print_next_token"]


@dataclass(frozen=True)
class Paging:
    """What the paging options ask for: one page (``page_size``, from ``token``) or all."""

    page_size: int | None
    token: str | None
    every: bool

    @property
    def one_page(self) -> bool:
        """True when one page was asked for, so the output carries the next page's token."""
        return self.page_size is not None or self.token is not None


def page_options(f: F) -> F:
    """Add ``--page-size``, ``--next-page-token`` and ``--all``."""
    f = click.option(
        "--all",
        "every",
        is_flag=True,
        help="Every page in turn (JSON: one list); each page is printed as it arrives.",
    )(f)
    f = click.option(
        "--next-page-token",
        "page_token",
        help="Continue after the page that printed this token.",
    )(f)
    return click.option(
        "--page-size",
        type=click.IntRange(1, MAX_PAGE_SIZE),
        help="One page of at most this many runs (JSON: an object carrying next_page_token).",
    )(f)


def paging_of(page_size: int | None, page_token: str | None, every: bool) -> Paging:
    """The options as one value.

    Raises:
        click.UsageError: ``--all`` with ``--next-page-token`` (all pages start at the first).
    """
    if every and page_token:
        raise click.UsageError("--all lists from the first page: drop --next-page-token")
    return Paging(page_size, page_token, every)


async def echo_json_stream(pages: AsyncIterator[Iterable[Any]]) -> None:
    """Print the items of every page as one indented JSON list, page by page."""
    first = True
    click.echo("[", nl=False)
    async for items in pages:
        for item in items:
            text = json.dumps(item, indent=2, ensure_ascii=False, default=str)
            click.echo(("\n" if first else ",\n") + "  " + text.replace("\n", "\n  "), nl=False)
            first = False
    click.echo("]" if first else "\n]")


def print_next_token(token: str | None) -> None:
    """Tell how to get the next page, when there is one."""
    if token is not None:
        console.print(f"more: --next-page-token {token}", soft_wrap=True)
