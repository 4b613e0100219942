"""``eval`` and ``replay-eval``: ADK eval sets, captured sessions and counterfactual replays
(:mod:`adk_temporal.evaluation`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import click
from google.genai import types
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..app import App, AppLoadError, load_app
from ..evaluation import (
    CandidateChange,
    CaseResult,
    EvalEngine,
    EvalReport,
    ReplayOptions,
    ReplayReport,
    SessionSelection,
    capture_eval_set,
    in_process_engine,
    load_criteria,
    load_eval_set,
    replay_sessions,
    run_eval_set,
    select_sessions,
)
from ..evaluation.charts import write_chart
from ..evaluation.criteria import config_path_for
from ..evaluation.evalsets import parse_eval_set_arg
from ..evaluation.pricing import DEFAULT_PRICES, parse_price
from ..evaluation.running import StartedRun
from ..ids import SessionKey
from ..sessions import SessionService
from ..worker import artifact_store, session_store
from .common import (
    EXIT_FAILED,
    connect,
    connection_options,
    console,
    data_dir_option,
    err_console,
    gcs_bucket_option,
    json_option,
    postgres_option,
    print_json,
    require_path,
    run_command,
)

__all__ = ["eval_group", "replay_eval"]


class _RunByDefault(click.Group):
    """``eval APP EVALSET...`` means ``eval run APP EVALSET...``, as ``adk eval`` reads."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Put ``run`` before arguments that name no subcommand."""
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group("eval", cls=_RunByDefault)
def eval_group() -> None:
    """Run ADK eval sets against an app (``eval APP EVALSET...``), or capture recorded
    sessions as one (``eval capture``)."""


def _app(spec: str) -> App:
    try:
        return load_app(spec)
    except AppLoadError as err:
        raise click.BadParameter(str(err), param_hint="APP") from err


def _root(app: App, root_agent: str | None) -> str:
    from ..agents import AgentRegistry

    known = sorted(AgentRegistry(app.agents))
    if root_agent is not None and root_agent not in known:
        raise click.BadParameter(
            f"the app has no agent {root_agent!r} (it has {', '.join(known)})",
            param_hint="--root-agent",
        )
    return root_agent or app.agents[0].name


def _root_agent_option(f: Any) -> Any:
    return click.option(
        "--root-agent",
        help="The agent each user turn is sent to (default: the app's first agent).",
    )(f)


def _temporal_engine(adk: Any, sessions: SessionService, turn_timeout: float) -> EvalEngine:
    async def start(key: SessionKey, agent: str, message: types.Content) -> StartedRun:
        handle: StartedRun = await adk.start(*key, agent, message)
        return handle

    return EvalEngine(sessions, start, turn_timeout)


def _print_case(case: CaseResult, detailed: bool) -> None:
    mark = "[green]PASSED[/]" if case.status == "PASSED" else f"[red]{case.status}[/]"
    console.print(f"{mark} {escape(case.eval_set_id)} / {escape(case.eval_id)}")
    if case.error:
        console.print(f"  [red]{escape(case.error)}[/]")
    for metric in case.metrics:
        score = "n/a" if metric.score is None else f"{metric.score:.4f}"
        console.print(
            f"  {metric.metric_name}: {score} (threshold {metric.threshold}) {metric.eval_status}"
        )
    if not detailed:
        return
    table = Table("turn", "prompt", "expected", "actual", "expected calls", "actual calls")
    for number, turn in enumerate(case.turns, 1):
        table.add_row(
            str(number),
            escape(turn.prompt),
            escape(turn.expected_response),
            escape(turn.actual_response),
            escape("\n".join(turn.expected_tool_calls)),
            escape("\n".join(turn.actual_tool_calls)),
        )
    console.print(table)


def _summary(report: EvalReport) -> None:
    counts: dict[str, list[int]] = {}
    for case in report.cases:
        passed = counts.setdefault(case.eval_set_id, [0, 0])
        passed[0 if case.status == "PASSED" else 1] += 1
    console.print("Eval Run Summary")
    for set_id, (passed_count, failed_count) in counts.items():
        console.print(
            f"{escape(set_id)}:\n  Tests passed: {passed_count}\n  Tests failed: {failed_count}"
        )


@eval_group.command("run")
@click.argument("app_spec", metavar="APP")
@click.argument("eval_sets", nargs=-1, required=True, metavar="EVALSET[:ID,...]...")
@click.option(
    "--config-file-path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The criteria (default: test_config.json beside a single eval set file, else "
    "ADK's defaults).",
)
@click.option("--print-detailed-results", is_flag=True, help="Print every turn of each case.")
@_root_agent_option
@click.option(
    "--parallelism",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Cases run at once.",
)
@click.option("--on-temporal", is_flag=True, help="Run the turns through Temporal workers.")
@connection_options
@data_dir_option
@postgres_option
@json_option
def run_evals(
    app_spec: str,
    eval_sets: tuple[str, ...],
    config_file_path: Path | None,
    print_detailed_results: bool,
    root_agent: str | None,
    parallelism: int,
    on_temporal: bool,
    address: str,
    namespace: str,
    task_queue: str,
    data_dir: Path,
    postgres_dsn: str | None,
    as_json: bool,
) -> None:
    """Run ADK eval sets (``*.evalset.json``, or old ``*.test.json``) against APP
    (``package.module:attribute``) and score them with ADK's metrics.

    Each EVALSET may end with ``:id1,id2`` to run only those cases. Exits 0 when every case
    passed, 4 when one failed (or none ran). In-process by default, over in-memory stores;
    with --on-temporal the turns run on the workers serving APP's agents, in the sessions
    of --data-dir (or --postgres-dsn).
    """
    app = _app(app_spec)
    agent = _root(app, root_agent)
    chosen = [parse_eval_set_arg(arg) for arg in eval_sets]
    criteria = load_criteria(config_file_path or config_path_for([p for p, _ in chosen]))
    loaded = [(load_eval_set(path), ids) for path, ids in chosen]

    async def body() -> int:
        engine, close = await _engine(
            app, on_temporal, address, namespace, task_queue, data_dir, postgres_dsn
        )
        try:
            cases: list[CaseResult] = []
            for eval_set, ids in loaded:
                cases += await run_eval_set(
                    engine,
                    eval_set,
                    app_name=app.name or "eval",
                    agent=agent,
                    criteria=criteria,
                    case_ids=ids,
                    parallelism=parallelism,
                )
        finally:
            await close()
        report = EvalReport(criteria=criteria, cases=cases)
        if as_json:
            print_json({"passed": report.passed, **report.model_dump(mode="json")})
        else:
            for case in report.cases:
                _print_case(case, print_detailed_results)
            _summary(report)
        return 0 if report.passed else EXIT_FAILED

    run_command(body())


async def _engine(
    app: App,
    on_temporal: bool,
    address: str,
    namespace: str,
    task_queue: str,
    data_dir: Path,
    postgres_dsn: str | None,
) -> tuple[EvalEngine, Any]:
    """The engine the cases run on, and what closes it."""
    if not on_temporal:

        async def nothing() -> None:
            return None

        return in_process_engine(app), nothing
    from ..client import AdkClient

    if not postgres_dsn:
        require_path(data_dir, "data directory")
    sessions = session_store(data_dir, postgres_dsn)
    client = await connect(address, namespace)
    adk = AdkClient(client, task_queue=task_queue, session_service=sessions)
    return _temporal_engine(adk, sessions, 300.0), sessions.close


def _stores(data_dir: Path, postgres_dsn: str | None) -> SessionService:
    if not postgres_dsn:
        require_path(data_dir / "sessions.db", "session store")
    return session_store(data_dir, postgres_dsn)


def _when(value: datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


def _selection_options(f: Any) -> Any:
    for decorate in (
        click.option(
            "--until", type=click.DateTime(), help="Only sessions last updated before this time."
        ),
        click.option(
            "--since", type=click.DateTime(), help="Only sessions last updated at or after this."
        ),
        click.option(
            "--session",
            "session_ids",
            multiple=True,
            help="A session id (repeatable; comma-separated ids too); every session when none.",
        ),
        click.option(
            "--user",
            "user_ids",
            multiple=True,
            required=True,
            help="Whose sessions (repeatable): the store lists sessions per user.",
        ),
        click.option("--app", "app_name", required=True, help="The app the sessions belong to."),
    ):
        f = decorate(f)
    return f


def _selection(
    app_name: str,
    user_ids: Sequence[str],
    session_ids: Sequence[str],
    since: datetime | None,
    until: datetime | None,
) -> SessionSelection:
    ids = [s for given in session_ids for s in given.split(",") if s]
    return SessionSelection(app_name, list(user_ids), ids, _when(since), _when(until))


@eval_group.command("capture")
@_selection_options
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The eval set file to write (e.g. regressions.evalset.json).",
)
@click.option("--eval-set-id", help="The eval set's id (default: the file name's stem).")
@data_dir_option
@postgres_option
def capture(
    app_name: str,
    user_ids: tuple[str, ...],
    session_ids: tuple[str, ...],
    since: datetime | None,
    until: datetime | None,
    output: Path,
    eval_set_id: str | None,
    data_dir: Path,
    postgres_dsn: str | None,
) -> None:
    """Write recorded sessions as an ADK eval set, one case per session, so a real
    conversation becomes a regression case (the session store is only read)."""
    selection = _selection(app_name, user_ids, session_ids, since, until)
    set_id = eval_set_id or output.name.split(".")[0]

    async def body() -> None:
        store = _stores(data_dir, postgres_dsn)
        try:
            chosen = await select_sessions(store, selection)
            eval_set = await capture_eval_set(store, chosen, eval_set_id=set_id)
        finally:
            await store.close()
        output.write_text(
            eval_set.model_dump_json(indent=2, exclude_none=True) + "\n", encoding="utf-8"
        )
        turns = sum(len(c.conversation or ()) for c in eval_set.eval_cases)
        err_console.print(
            f"wrote {len(eval_set.eval_cases)} case(s), {turns} turn(s) to {escape(str(output))}"
        )

    run_command(body())


def _instructions(given: Sequence[str], root: str) -> dict[str, str]:
    """``[AGENT=]FILE`` options as instruction text by agent (the root agent by default)."""
    texts: dict[str, str] = {}
    for item in given:
        agent, sep, name = item.partition("=")
        if not sep:
            agent, name = root, item
        path = Path(name)
        try:
            texts[agent] = path.read_text(encoding="utf-8")
        except OSError as err:
            raise click.BadParameter(
                f"cannot read {path}: {err.strerror or err}", param_hint="--instruction-file"
            ) from err
    return texts


def _prices(given: Sequence[str]) -> list[tuple[str, Any]]:
    prices = []
    for item in given:
        try:
            prices.append(parse_price(item))
        except ValueError as err:
            raise click.BadParameter(str(err), param_hint="--price") from err
    return [*prices, *DEFAULT_PRICES.items()]


def _replay_table(report: ReplayReport) -> Table:
    table = Table(
        "session",
        "turns",
        "first divergence",
        "added",
        "dropped",
        "similarity",
        "tokens",
        "est. cost",
    )
    for s in report.sessions:
        first = s.first_divergence
        where = (
            f"turn {first.turn} {first.kind}: {first.recorded} → {first.candidate}"
            if first is not None
            else (f"[red]{s.error}[/]" if s.error else "—")
        )
        table.add_row(
            escape(f"{s.user_id}/{s.session_id}"),
            str(len(s.turns)),
            where if s.error and first is None else escape(where),
            escape(", ".join(s.calls_added) or "—"),
            escape(", ".join(s.calls_dropped) or "—"),
            f"{s.similarity:.3f}",
            f"{s.tokens_before.total_tokens} → {s.tokens_after.total_tokens}",
            f"${s.cost_before:.4f} → ${s.cost_after:.4f}",
        )
    return table


@click.command("replay-eval")
@_selection_options
@click.option(
    "--agent",
    "agent_spec",
    required=True,
    help="The candidate app as package.module:attribute (its agents, changed as asked).",
)
@click.option("--model", help="The model every LLM agent with a model of its own calls instead.")
@click.option(
    "--instruction-file",
    "instruction_files",
    multiple=True,
    help="[AGENT=]FILE: the agent's new instruction (the root agent's without AGENT=).",
)
@click.option(
    "--sandbox",
    "sandbox_spec",
    help="An app (package.module:attribute) whose tools run the calls the record cannot "
    "answer; without one such calls get a 'no recorded result' error.",
)
@_root_agent_option
@click.option("--seed", type=int, help="generate_content_config.seed of every model request.")
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Sessions replayed at once.",
)
@click.option(
    "--price",
    "prices",
    multiple=True,
    help="PATTERN=PROMPT,OUTPUT: dollars per million tokens for matching models (repeatable).",
)
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write a chart: .png (needs the bench extra) or .html (self-contained).",
)
@click.option("--fail-on-divergence", is_flag=True, help="Exit 4 when a session diverged (for CI).")
@data_dir_option
@postgres_option
@gcs_bucket_option
@json_option
def replay_eval(
    app_name: str,
    user_ids: tuple[str, ...],
    session_ids: tuple[str, ...],
    since: datetime | None,
    until: datetime | None,
    agent_spec: str,
    model: str | None,
    instruction_files: tuple[str, ...],
    sandbox_spec: str | None,
    root_agent: str | None,
    seed: int | None,
    concurrency: int,
    prices: tuple[str, ...],
    plot: Path | None,
    fail_on_divergence: bool,
    data_dir: Path,
    postgres_dsn: str | None,
    gcs_bucket: str | None,
    as_json: bool,
) -> None:
    """Re-run recorded sessions' user turns with a candidate (--agent, changed by --model
    or --instruction-file), every tool call answered from the record and never executed.

    Approvals and inputs are answered as recorded. The live session and artifact stores are
    only read; the replay runs on in-memory copies. Prints per session the first
    divergence, calls added and dropped, final response similarity, tokens and estimated
    cost before and after (--json for CI; --plot for a chart).
    """
    app = _app(agent_spec)
    root = _root(app, root_agent)
    change = CandidateChange(
        model=model, instructions=_instructions(instruction_files, root), seed=seed
    )
    options = ReplayOptions(
        root_agent=root,
        concurrency=concurrency,
        prices=_prices(prices),
        sandbox=_app(sandbox_spec) if sandbox_spec else None,
    )
    selection = _selection(app_name, user_ids, session_ids, since, until)

    async def body() -> int:
        store = _stores(data_dir, postgres_dsn)
        artifacts = artifact_store(data_dir, gcs_bucket)
        try:
            chosen = await select_sessions(store, selection)
            report = await _replay_with_progress(store, artifacts, chosen, app, change, options)
        finally:
            await store.close()
        if plot is not None:
            write_chart(report, plot)
        if as_json:
            print_json(report.as_json())
        else:
            console.print(_replay_table(report))
            totals = report.totals()
            console.print(
                f"{totals['diverged']} of {totals['sessions']} session(s) diverged; mean "
                f"similarity {totals['mean_similarity']:.3f}; tokens {totals['tokens_before']}"
                f" → {totals['tokens_after']}; est. cost ${totals['cost_before']:.4f} → "
                f"${totals['cost_after']:.4f}"
            )
        return EXIT_FAILED if fail_on_divergence and report.diverged else 0

    run_command(body())


async def _replay_with_progress(
    store: SessionService,
    artifacts: Any,
    chosen: Sequence[Any],
    app: App,
    change: CandidateChange,
    options: ReplayOptions,
) -> ReplayReport:
    """The replay, with a progress bar on stderr (shown on a terminal only)."""
    keys = [s.key for s in chosen]
    columns = (TextColumn("replaying"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    started = time.perf_counter()
    with Progress(*columns, console=err_console, transient=True) as progress:
        task = progress.add_task("sessions", total=len(keys))
        report = await replay_sessions(
            store,
            artifacts,
            keys,
            app,
            change,
            options,
            on_session=lambda _: progress.advance(task),
        )
    took = time.perf_counter() - started
    err_console.print(f"replayed {len(keys)} session(s) in {took:.2f} s")
    return report
