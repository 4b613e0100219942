"""``check-compactions`` and ``show --compactions``: a session's compactions and their
receipts, each recomputed from the stored events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from ..compaction import ReceiptCheck, check_receipt
from ..ids import SessionKey, session_key_of
from ..worker import session_store
from .common import (
    CliError,
    console,
    data_dir_option,
    encryption_option,
    json_option,
    postgres_option,
    print_json,
    require_path,
    run_command,
    store_keys,
)

__all__ = ["check_compactions", "compaction_checks", "print_compactions"]


def _session_of(workflow_id: str) -> SessionKey:
    key = session_key_of(workflow_id)
    if key is None:
        raise CliError(
            f"{workflow_id!r} is no invocation's workflow id", "ids look like adk/APP/USER/SESSION"
        )
    return key


async def compaction_checks(
    workflow_id: str, data_dir: Path, postgres_dsn: str | None
) -> list[ReceiptCheck]:
    """Every compaction of the session of ``workflow_id``, its receipt checked against the
    stored events, oldest first.

    Raises:
        CliError: The id is no invocation's, or the store holds no such session.
    """
    key = _session_of(workflow_id)
    if not postgres_dsn:
        require_path(data_dir / "sessions.db", "session store")
    sessions = session_store(data_dir, postgres_dsn, keys=store_keys())
    try:
        events = (await sessions.get(key)).events
    except LookupError as err:
        raise CliError(
            str(err), "pass the --data-dir (or --postgres-dsn) the worker uses"
        ) from None
    finally:
        await sessions.close()
    return [check_receipt(events, e.id) for e in events if e.actions.compaction is not None]


def _line(check: ReceiptCheck) -> str:
    receipt = check.receipt
    if receipt is None:
        return f"{check.event_id}  (made before receipts: nothing to check)"
    kept = ", ".join(f"{k.kind} {k.name or k.call_id}" for k in receipt.kept_open) or "none"
    verdict = "ok" if check.ok else f"MISMATCH: {check.problem}"
    return (
        f"{check.event_id}  folds {receipt.event_count} events {receipt.first_event_id}.."
        f"{receipt.last_event_id}  tokens {receipt.tokens_before} → {receipt.tokens_after}"
        f" ({receipt.tokens_counted_by})  kept open: {kept}  {receipt.digest[:19]}…  {verdict}"
    )


def print_compactions(checks: list[ReceiptCheck]) -> None:
    """The compactions, one line each."""
    if not checks:
        console.print("no compactions")
    for check in checks:
        console.print(escape(_line(check)))


def _as_json(checks: list[ReceiptCheck]) -> list[dict[str, Any]]:
    return [c.model_dump(mode="json") for c in checks]


@click.command("check-compactions")
@data_dir_option
@postgres_option
@encryption_option
@json_option
@click.argument("workflow_id")
@click.option("--event", "event_id", help="Check only this compaction event.")
def check_compactions(
    data_dir: Path, postgres_dsn: str | None, as_json: bool, workflow_id: str, event_id: str | None
) -> None:
    """Recompute each compaction's receipt digest from the session's stored events; exit 1
    naming any that no longer matches (the folded events changed or went)."""

    async def body() -> int:
        checks = await compaction_checks(workflow_id, data_dir, postgres_dsn)
        if event_id is not None:
            checks = [c for c in checks if c.event_id == event_id]
            if not checks:
                raise CliError(f"the session holds no compaction event {event_id!r}")
        if as_json:
            print_json(_as_json(checks))
        else:
            print_compactions(checks)
        bad = [c.event_id for c in checks if not c.ok]
        if bad:
            raise CliError(
                f"receipt mismatch for {', '.join(bad)}: the stored events are not those folded"
            )
        return 0

    run_command(body())
