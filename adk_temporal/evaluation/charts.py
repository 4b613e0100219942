"""A replay's report at a glance: a PNG chart (matplotlib, the ``bench`` extra) or a
self-contained HTML page (no dependency, no external file).

Both show one row per session: its final-response similarity as a bar (green when the
session did not diverge, red when it did), and its tokens before and after; the HTML page
adds the first divergence and the calls added and dropped, and the totals above.
"""

from __future__ import annotations

import html
from pathlib import Path

from ..extras import needs_extra
from .report import ReplayReport, SessionReplay

__all__ = ["write_chart"]

_SAME, _DIVERGED = "#2e7d32", "#c62828"


def _label(session: SessionReplay) -> str:
    return f"{session.user_id}/{session.session_id}"


def _png(report: ReplayReport, path: Path) -> None:
    with needs_extra("bench", "a PNG replay chart"):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

    sessions = report.sessions
    height = max(2.5, 0.28 * len(sessions) + 1.5)
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, height), sharey=True)
    rows = list(range(len(sessions)))
    colors = [_DIVERGED if s.diverged else _SAME for s in sessions]
    left.barh(rows, [s.similarity for s in sessions], color=colors)
    left.set_xlim(0, 1)
    left.set_xlabel("final response similarity (ROUGE-1 F)")
    left.set_yticks(rows, [_label(s) for s in sessions], fontsize=7)
    left.invert_yaxis()
    right.barh(
        [r - 0.2 for r in rows],
        [s.tokens_before.total_tokens for s in sessions],
        height=0.4,
        color="#9e9e9e",
        label="recorded",
    )
    right.barh(
        [r + 0.2 for r in rows],
        [s.tokens_after.total_tokens for s in sessions],
        height=0.4,
        color="#1565c0",
        label="candidate",
    )
    right.set_xlabel("tokens")
    right.legend(loc="lower right")
    totals = report.totals()
    figure.suptitle(
        f"{totals['diverged']} of {totals['sessions']} sessions diverged · mean similarity "
        f"{totals['mean_similarity']:.3f} · tokens {totals['tokens_before']} → "
        f"{totals['tokens_after']}"
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _row(session: SessionReplay) -> str:
    first = session.first_divergence
    where = (
        f"turn {first.turn} {first.kind}: {html.escape(first.recorded)} → "
        f"{html.escape(first.candidate)}"
        if first is not None
        else html.escape(session.error or "—")
    )
    color = _DIVERGED if session.diverged else _SAME
    width = round(session.similarity * 160)
    return (
        f"<tr><td>{html.escape(_label(session))}</td>"
        f'<td><svg width="164" height="12"><rect width="{width}" height="12" '
        f'fill="{color}"/></svg> {session.similarity:.3f}</td>'
        f"<td>{where}</td>"
        f"<td>{html.escape(', '.join(session.calls_added) or '—')}</td>"
        f"<td>{html.escape(', '.join(session.calls_dropped) or '—')}</td>"
        f"<td>{session.tokens_before.total_tokens} → {session.tokens_after.total_tokens}</td>"
        f"<td>${session.cost_before:.4f} → ${session.cost_after:.4f}</td></tr>"
    )


def _html(report: ReplayReport) -> str:
    totals = report.totals()
    summary = " · ".join(f"{html.escape(k)}: {html.escape(str(v))}" for k, v in totals.items())
    rows = "\n".join(_row(s) for s in report.sessions)
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Replay report</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;"
        "font-size:13px;vertical-align:top}</style></head><body>"
        f"<h1>Replay report</h1><p>{summary}</p>"
        "<table><tr><th>session</th><th>similarity</th><th>first divergence</th>"
        "<th>calls added</th><th>calls dropped</th><th>tokens</th><th>est. cost</th></tr>"
        f"{rows}</table></body></html>\n"
    )


def write_chart(report: ReplayReport, path: Path) -> None:
    """Write the report's chart to ``path``: a PNG for ``.png``, else an HTML page.

    Raises:
        MissingExtraError: A PNG was asked for and matplotlib (the ``bench`` extra) is
            not installed.
    """
    if path.suffix.lower() == ".png":
        _png(report, path)
    else:
        path.write_text(_html(report), encoding="utf-8")
