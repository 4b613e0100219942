"""A stand-in payment API with the one property a real one must have: idempotency keys.

``FilePaymentGateway`` appends to a JSON-lines file shared by every worker process on the
machine. ``charge`` with a key that was already charged returns the earlier charge instead
of charging again, so a tool that passes ``ctx.idempotency_key`` can be re-run after a crash
without charging twice. Every attempt is logged too, so a test can show that a re-run
happened and still charged once.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

__all__ = ["PAYMENTS_ENV", "FilePaymentGateway", "gateway_from_env"]

PAYMENTS_ENV = "WEATHER_PAYMENTS_FILE"
"""Environment variable naming the payments ledger file of the example agent."""


class FilePaymentGateway:
    """Charges recorded in a JSON-lines file, idempotent by key, safe across processes."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def _records(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line]

    def charge(self, idempotency_key: str, amount_usd: float, description: str) -> str:
        """Charge once per key; return the charge id (the earlier one for a repeated key)."""
        with open(self.path, "a+") as ledger:
            # An exclusive lock makes check-then-append atomic across worker processes.
            fcntl.flock(ledger, fcntl.LOCK_EX)
            ledger.seek(0)
            records = [json.loads(line) for line in ledger.read().splitlines() if line]
            earlier = [r for r in records if r["kind"] == "charge" and r["key"] == idempotency_key]
            ledger.write(json.dumps({"kind": "attempt", "key": idempotency_key}) + "\n")
            if earlier:
                return str(earlier[0]["charge_id"])
            charge_id = f"ch-{len([r for r in records if r['kind'] == 'charge']) + 1}"
            record = {
                "kind": "charge",
                "key": idempotency_key,
                "charge_id": charge_id,
                "amount_usd": amount_usd,
                "description": description,
            }
            ledger.write(json.dumps(record) + "\n")
            return charge_id

    def charges(self) -> list[dict[str, Any]]:
        """Every charge made, in order."""
        return [r for r in self._records() if r["kind"] == "charge"]

    def attempts(self) -> list[str]:
        """The key of every charge attempt, repeated keys included."""
        return [r["key"] for r in self._records() if r["kind"] == "attempt"]


def gateway_from_env() -> FilePaymentGateway | None:
    """The gateway named by ``WEATHER_PAYMENTS_FILE``, or ``None`` when it is unset."""
    path = os.environ.get(PAYMENTS_ENV)
    return FilePaymentGateway(path) if path else None
