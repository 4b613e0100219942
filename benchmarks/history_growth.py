"""History growth: bytes of Temporal history per conversation turn, ours against a bare workflow.

One session of T turns (T = 1, 5, 10, 20, 40, 80), each turn "look up tN" → two parallel
``lookup`` calls of ~1 KB each → a short answer; then one turn whose single tool call
returns ~1 MB, which must cost history what a small result costs. Each of our turns is one
invocation, i.e. one run of workflow ``adk/bench/u/<session>``; the session's history is the
sum over its runs.
Sizes are the protobuf ``ByteSize()`` of each run's ``History`` (what the server stores and
counts against its 50 MiB limit). The bare workflow runs the same activities two ways: one run
per turn (the shape of ours) and one run holding the whole session (the shape of Temporal's
official ADK plugin, whose figures from ENVIRONMENT.md are plotted for reference).

Run: ``python benchmarks/history_growth.py`` (writes results/history_growth.json and .png).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import (
    APP,
    LARGE_AGENT,
    LARGE_RESULT_BYTES,
    RESULTS_DIR,
    SERVER_NOTE,
    USER,
    breakdown,
    connect,
    dev_server,
    finish,
    history_bytes,
    in_process_worker,
    print_table,
    run_adk_turn,
    run_bare,
    run_events,
    scratch_dir,
    split_turns,
    write_results,
)
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from adk_temporal.client import AdkClient

TURN_COUNTS = (1, 5, 10, 20, 40, 80)
TOOLS = 2
SHAPES = ("ours", "bare_per_turn", "bare_session")

# Temporal's official ADK plugin, measured on this machine (ENVIRONMENT.md): 8.6 KB for a
# one-turn session, 49.7 KB per turn averaged over 40 turns, the 40th turn alone 92 KB.
OFFICIAL_FIRST_TURN_KB = 8.6
OFFICIAL_TURN_40_KB = 92.0
OFFICIAL_AVG_40_KB = 49.7

KB = 1000


def _json_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def _without_defaults(value: Any) -> Any:
    """``value`` without members that are null, empty, false or "" (recursively)."""
    if isinstance(value, dict):
        kept = {k: _without_defaults(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, {}, [], False, "")}
    if isinstance(value, list):
        return [_without_defaults(v) for v in value]
    return value


def payload_anatomy(events: Sequence[HistoryEvent]) -> dict[str, int]:
    """Bytes of one of our runs that a change to the runtime's payloads could remove.

    ``default_valued_fields``: members written with a null/empty/false value (what
    ``exclude_defaults`` would drop). ``invocation_refs``: the ``ref`` object every activity
    input repeats. ``tool_responses_resent``: function-response bodies the model step
    receives again after the tool activities already returned them. ``start_upserts``:
    search-attribute upserts before the last one (the client sets the same values at
    start). ``markers``: local-activity markers.
    """
    anatomy = dict.fromkeys(
        (
            "payload_bytes",
            "default_valued_fields",
            "invocation_refs",
            "tool_responses_resent",
            "start_upserts",
            "markers",
        ),
        0,
    )
    upserts = []
    for event in events:
        attrs = event.WhichOneof("attributes")
        if attrs is None:
            continue
        if attrs == "upsert_workflow_search_attributes_event_attributes":
            upserts.append(event.ByteSize())
        elif attrs == "marker_recorded_event_attributes":
            anatomy["markers"] += event.ByteSize()
        inner = getattr(event, attrs)
        for field in ("input", "result"):
            if not (hasattr(inner, field) and inner.HasField(field)):
                continue
            for payload in getattr(inner, field).payloads:
                data = json.loads(payload.data)
                anatomy["payload_bytes"] += len(payload.data)
                anatomy["default_valued_fields"] += _json_size(data) - _json_size(
                    _without_defaults(data)
                )
                if not isinstance(data, dict):
                    continue
                if "ref" in data:
                    anatomy["invocation_refs"] += _json_size({"ref": data["ref"]})
                for pending in data.get("pending_events", []):
                    for part in (pending.get("content") or {}).get("parts", []):
                        response = (part.get("function_response") or {}).get("response")
                        if response is not None:
                            anatomy["tool_responses_resent"] += _json_size(response)
    anatomy["start_upserts"] = sum(upserts[:-1])
    return anatomy


async def session(client: Client, adk: AdkClient, task_queue: str, turns: int) -> dict[str, Any]:
    """Measure one session of ``turns`` turns three ways: ours, bare per turn, bare whole."""
    ours = []
    bare_turns = []
    for turn in range(1, turns + 1):
        run = await run_adk_turn(adk, f"s{turns:02d}", turn, TOOLS)
        ours.append(await run_events(client, run))
        bare = await run_bare(client, task_queue, f"bare-turn/{turns}", 1, TOOLS, first_turn=turn)
        bare_turns.append(await run_events(client, bare))
    whole = await run_events(
        client, await run_bare(client, task_queue, f"bare-session/{turns}", turns, TOOLS)
    )
    shapes = dict(zip(SHAPES, (ours, bare_turns, split_turns(whole)), strict=True))
    return {
        name: {
            "total_bytes": sum(history_bytes(t) for t in per_turn),
            "events": sum(len(t) for t in per_turn),
            "runs": len(per_turn) if name != "bare_session" else 1,
            "bytes_by_turn": [history_bytes(t) for t in per_turn],
        }
        for name, per_turn in shapes.items()
    } | {
        "breakdown_turn_2": {
            name: breakdown(per_turn[1]) for name, per_turn in shapes.items() if turns >= 2
        },
        "ours_anatomy_turn_2": payload_anatomy(ours[1]) if turns >= 2 else {},
    }


async def large_result_turn(client: Client, adk: AdkClient) -> dict[str, Any]:
    """Bytes of a turn whose one tool call returns ~1 MB (it must travel by reference)."""
    handle = await adk.start(APP, USER, "large", LARGE_AGENT, "fetch report")
    result = await handle.result()
    if result.status != "completed":
        raise RuntimeError(f"the large-result turn ended {result.status}: {result.error}")
    assert handle.run_id is not None
    history = await client.get_workflow_handle(
        handle.workflow_id, run_id=handle.run_id
    ).fetch_history()
    return {"tool_result_bytes": LARGE_RESULT_BYTES, "turn_bytes": history_bytes(history.events)}


def official_turn_kb(turn: int) -> float:
    """The official plugin's bytes for turn ``turn``: linear per turn, i.e. quadratic total."""
    return OFFICIAL_FIRST_TURN_KB + (OFFICIAL_TURN_40_KB - OFFICIAL_FIRST_TURN_KB) * (turn - 1) / 39


def plot(longest: dict[str, Any], path: Path) -> None:
    """Bytes added per turn vs turn: ours, both bare shapes, the official plugin's reference."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    turns = list(range(1, len(longest["ours"]["bytes_by_turn"]) + 1))
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    for key, label, style in (
        ("ours", "adk-temporal (one run per turn)", "-"),
        ("bare_per_turn", "bare workflow, one run per turn", "--"),
        ("bare_session", "bare workflow, one run per session", ":"),
    ):
        ax.plot(turns, [b / KB for b in longest[key]["bytes_by_turn"]], style, label=label)
    measured = RESULTS_DIR / "official_plugin.json"
    if measured.exists():
        official = json.loads(measured.read_text())["growth"][str(len(turns))]["official"]
        ax.plot(
            turns,
            [b / KB for b in official["bytes_by_turn"]],
            color="tab:red",
            label="official ADK plugin, one run per session (official_plugin.py)",
        )
    ref = list(range(1, 41))
    ax.plot(
        ref,
        [official_turn_kb(t) for t in ref],
        color="grey",
        alpha=0.6,
        label="official ADK plugin, ENVIRONMENT.md reference (8.6 KB at turn 1, 92 KB at 40)",
    )
    ax.scatter([1, 40], [OFFICIAL_FIRST_TURN_KB, OFFICIAL_TURN_40_KB], color="grey", zorder=3, s=18)
    ax.set_xlabel("turn")
    ax.set_ylabel("history bytes added by the turn (KB, protobuf ByteSize)")
    ax.set_title(f"History growth, K={TOOLS} tool calls of ~1 KB per turn")
    ax.set_yscale("log")
    ax.legend(fontsize=8, loc="upper left")
    ax.text(0.99, 0.01, SERVER_NOTE, transform=ax.transAxes, fontsize=6, ha="right", va="bottom")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


async def main() -> None:
    with scratch_dir() as tmp, dev_server(Path(tmp)) as server:
        client = await connect(server.address)
        async with in_process_worker(client, Path(tmp)) as task_queue:
            adk = AdkClient(client, task_queue=task_queue)
            sessions = {t: await session(client, adk, task_queue, t) for t in TURN_COUNTS}
            large = await large_result_turn(client, adk)
    print(f"server: {SERVER_NOTE}")
    print("history bytes = protobuf History.ByteSize() summed over the session's runs")
    rows = []
    for t, s in sessions.items():
        ours, per_turn, whole = s["ours"], s["bare_per_turn"], s["bare_session"]
        rows.append(
            [
                t,
                ours["total_bytes"] / KB,
                ours["events"],
                ours["total_bytes"] / t / KB,
                per_turn["total_bytes"] / t / KB,
                whole["total_bytes"] / t / KB,
                ours["total_bytes"] / per_turn["total_bytes"],
                ours["total_bytes"] / whole["total_bytes"],
                OFFICIAL_FIRST_TURN_KB if t == 1 else OFFICIAL_AVG_40_KB if t == 40 else "",
            ]
        )
    print_table(
        f"Session totals (K={TOOLS}, ~1 KB per tool result)",
        [
            "T",
            "ours KB",
            "events",
            "ours KB/turn",
            "bare/turn-run KB/turn",
            "bare/session-run KB/turn",
            "ours/bare(turn-run)",
            "ours/bare(session-run)",
            "official KB/turn",
        ],
        rows,
    )
    longest = sessions[TURN_COUNTS[-1]]
    shown = [t for t in (1, 2, 5, 10, 20, 40, 80) if t <= TURN_COUNTS[-1]]
    print_table(
        f"Bytes added by turn t (session of {TURN_COUNTS[-1]} turns)",
        ["t", "ours KB", "bare/turn-run KB", "bare/session-run KB", "official KB (ref)"],
        [
            [
                t,
                longest["ours"]["bytes_by_turn"][t - 1] / KB,
                longest["bare_per_turn"]["bytes_by_turn"][t - 1] / KB,
                longest["bare_session"]["bytes_by_turn"][t - 1] / KB,
                round(official_turn_kb(t), 1) if t <= 40 else "",
            ]
            for t in shown
        ],
    )
    kinds = longest["breakdown_turn_2"]
    names = sorted(set().union(*kinds.values()), key=lambda k: -kinds["ours"].get(k, 0))
    print_table(
        "Where a turn's bytes go (turn 2; '/payload' = payload data inside those events)",
        ["kind", "ours", "bare/turn-run", "bare/session-run"],
        [[k, *(kinds[s].get(k, 0) for s in kinds)] for k in names],
    )

    anatomy = longest["ours_anatomy_turn_2"]
    print_table(
        "Our turn-2 run: bytes that proposed payload changes would remove (overlapping)",
        ["part", "bytes", "share of the run"],
        [[k, v, v / longest["ours"]["bytes_by_turn"][1]] for k, v in anatomy.items()],
    )
    ours_turns = longest["ours"]["bytes_by_turn"]
    flat = ours_turns[-1] / ours_turns[1]
    averages = {k: [s[k]["total_bytes"] / t for t, s in sessions.items()] for k in SHAPES}
    spread = max(averages["ours"]) / min(averages["ours"])
    ratios = {
        k: (sum(averages["ours"]) / sum(averages[k])) for k in ("bare_per_turn", "bare_session")
    }
    targets = {
        "turn_80_over_turn_2": {"value": flat, "target": "<= 1.2", "met": flat <= 1.2},
        "total_over_T_max_over_min": {
            "value": spread,
            "target": "total linear in T: total/T constant within 5% over every T",
            "met": spread <= 1.05,
        },
        "per_turn_over_bare_turn_run": {
            "value": ratios["bare_per_turn"],
            "target": "<= 1.5",
            "met": ratios["bare_per_turn"] <= 1.5,
        },
        "per_turn_over_bare_session_run": {
            "value": ratios["bare_session"],
            "target": "<= 1.5",
            "met": ratios["bare_session"] <= 1.5,
        },
        "turn_with_1_mb_tool_result_kb": {
            "value": large["turn_bytes"] / KB,
            "target": "< 20 KB",
            "met": large["turn_bytes"] < 20 * KB,
        },
    }
    print_table(
        "Targets",
        ["target", "value", "wanted", "met"],
        [[k, v["value"], v["target"], v["met"]] for k, v in targets.items()],
    )
    plot(longest, RESULTS_DIR / "history_growth.png")
    write_results(
        "history_growth",
        {
            "measure": "protobuf History.ByteSize() of each run, summed over a session's runs",
            "tools_per_turn": TOOLS,
            "sessions": {str(t): s for t, s in sessions.items()},
            "large_result_turn": large,
            "targets": targets,
            "official_reference_kb": {
                "turn_1": OFFICIAL_FIRST_TURN_KB,
                "turn_40": OFFICIAL_TURN_40_KB,
                "avg_40": OFFICIAL_AVG_40_KB,
            },
        },
    )


if __name__ == "__main__":
    asyncio.run(main())
    finish()
