"""Comparing a run on adk-temporal with the same run on google-adk.

Events are compared per branch, in order: nodes on one branch run one after another on
both, while nodes on different branches run at once and may store in either order (on
ADK as on Temporal). A scenario that runs nothing at once is compared in full order.
Joins' dict outputs compare as dicts, so their key order (ADK builds them from a set)
does not matter. Function-call ids a framework made up (``adk-`` and a random or derived
UUID) compare by the order they first appear in.
"""

from __future__ import annotations

from typing import Any

__all__ = ["assert_same_run"]


def _by_branch(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    lanes: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        lanes.setdefault(event.get("branch", ""), []).append(event)
    return lanes


def _made_up_ids(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` with each made-up call id replaced by its rank of first appearance."""
    ranks: dict[str, str] = {}
    renamed = []
    for event in events:
        event = dict(event)
        for key in ("calls", "responses"):
            if key in event:
                event[key] = [
                    [
                        name,
                        ranks.setdefault(cid, f"adk-{len(ranks)}")
                        if str(cid).startswith("adk-")
                        else cid,
                        value,
                    ]
                    for name, cid, value in event[key]
                ]
        renamed.append(event)
    return renamed


def assert_same_run(ours: dict[str, Any], adk: dict[str, Any], *, full_order: bool) -> None:
    """Assert both runs stored the same events (per branch, or all in order), state and
    outcome."""
    ours = {**ours, "events": _made_up_ids(ours["events"])}
    adk = {**adk, "events": _made_up_ids(adk["events"])}
    assert ours["state"] == adk["state"], "final state differs"
    assert (ours["error"] is None) == (adk["error"] is None), (ours["error"], adk["error"])
    if full_order:
        assert ours["events"] == adk["events"]
        return
    assert _by_branch(ours["events"]) == _by_branch(adk["events"])
