"""``adk-temporal demo``: the seed scenario end to end, and the console views the CLI shares.

The demo starts Temporal's dev server and an in-process worker for the weather agent on the
offline scripted model, then runs three invocations in one session: a forecast (state
``last_city``), a paid report that pauses for approval and is approved through the client
(``report.txt`` v1 plus the ``user:purchases.json`` ledger), and an update of the report
(``report.txt`` v2). It prints what an operator would see — events, the pending request with
the exact commands that answer it, artifact versions, session state, Temporal UI links — and
stops everything, unless asked to keep the server and worker running.

"""

from __future__ import annotations

import asyncio
import json
import shlex
import tempfile
import time
import uuid
from collections.abc import Iterable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text
from temporalio.converter import PayloadCodec

from .app import App, Stores
from .artifacts import (
    ArtifactService,
    GetArtifactVersionRequest,
    LoadRequest,
    VersionsRequest,
)
from .client import DEFAULT_TASK_QUEUE, AdkClient, InvocationHandle
from .devserver import DevServer
from .examples.weather import APP_NAME, build_weather_agent
from .flow.messages import AdkStatus
from .ids import SessionKey
from .render import StreamPrinter, part_bytes, request_lines, workflows_url
from .sessions import SessionService
from .worker import artifact_store, build_worker, session_store

__all__ = [
    "DEMO_AGENT",
    "DEMO_MESSAGES",
    "DEMO_USER",
    "DemoError",
    "run_demo",
]

DEMO_USER = "demo-user"
"""The user the demo's session belongs to."""

DEMO_AGENT = "weather_agent"
"""The agent the demo invokes."""

DEMO_MESSAGES = (
    "What's the weather in Hangzhou?",
    "Buy a weather report for Hangzhou",
    "Update the report for Hangzhou: take an umbrella",
)
"""The three user messages of the seed scenario, in order."""

_REPORT = "report.txt"
_LEDGER = "user:purchases.json"
_WAIT_SECONDS = 60.0
_STOPPED: tuple[AdkStatus, ...] = ("completed", "failed", "awaiting_confirmation", "awaiting_input")


class DemoError(RuntimeError):
    """The scenario did not go as scripted (an invocation failed or never paused)."""


# ------------------------------------------------------------------ scenario


class _Scenario:
    """The demo's session: starts invocations and prints what they did."""

    def __init__(
        self,
        console: Console,
        adk: AdkClient,
        sessions: SessionService,
        artifacts: ArtifactService,
        address: str,
        session_id: str,
    ) -> None:
        self.console = console
        self.adk = adk
        self.sessions = sessions
        self.artifacts = artifacts
        self.address = address
        self.session_id = session_id
        self._printed: set[str] = set()

    async def say(self, number: int, message: str) -> InvocationHandle:
        """Start an invocation with ``message`` and print its events until it stops."""
        self.console.print()
        self.console.print(Text.assemble((f"{number}. ", "bold"), (message, "bold")))
        handle = await self.adk.start(
            APP_NAME, DEMO_USER, self.session_id, DEMO_AGENT, message, stream=True
        )
        await self.settle(handle)
        return handle

    async def settle(
        self, handle: InvocationHandle, *, until: tuple[AdkStatus, ...] = _STOPPED
    ) -> AdkStatus:
        """Print the invocation's new events, replies as the model writes them, until it
        stops running; its status must then be in ``until``."""
        printer = StreamPrinter(self.console)
        spinner = self.console.status("waiting for the invocation…")
        spinner.start()
        try:
            async with asyncio.timeout(_WAIT_SECONDS):
                async for event in handle.stream():
                    spinner.stop()
                    # A piece carries the id of the event that will supersede it: only
                    # stored events count as printed.
                    if event.partial:
                        printer.feed(event)
                    elif event.id not in self._printed:
                        self._printed.add(event.id)
                        printer.feed(event)
                printer.close()
                status = await handle.wait_for_status(*until, timeout=_WAIT_SECONDS)
        except TimeoutError:
            raise DemoError(
                f"invocation {handle.workflow_id} neither finished nor paused within "
                f"{_WAIT_SECONDS:.0f}s"
            ) from None
        finally:
            spinner.stop()
        if status.status == "failed":
            raise DemoError(f"invocation {handle.workflow_id} failed: {status.error}")
        return status.status

    @property
    def key(self) -> SessionKey:
        """The demo's session."""
        return SessionKey(APP_NAME, DEMO_USER, self.session_id)

    async def state(self) -> dict[str, Any]:
        """The session's merged state."""
        return await self.sessions.get_state(self.key)

    async def print_versions(self, name: str, *, show_content: bool) -> None:
        """Print every version of artifact ``name``, with its content if asked."""
        key = self.key
        versions = (await self.artifacts.versions(VersionsRequest.of(key, file_name=name))).versions
        for version in versions:
            described = await self.artifacts.get_artifact_version(
                GetArtifactVersionRequest.of(key, file_name=name, version=version)
            )
            info = described.artifact_version
            self.console.print(
                f"  {name} v{version}  {info.mime_type}  {info.create_time:%Y-%m-%d %H:%M:%S}Z"
            )
            if show_content:
                loaded = await self.artifacts.load(
                    LoadRequest.of(key, file_name=name, version=version)
                )
                for text_line in part_bytes(loaded.part).decode(errors="replace").splitlines():
                    self.console.print(Text(f"      │ {text_line}", style="dim"))


def _step(console: Console, text: str) -> None:
    console.print(Text.assemble(("▸ ", "bold green"), text))


async def _scenario(scenario: _Scenario, console: Console, namespace: str) -> None:
    forecast, buy, update = DEMO_MESSAGES
    await scenario.say(1, forecast)
    last_city = (await scenario.state()).get("last_city")
    console.print(Text.assemble(("state ", "magenta"), f"last_city = {json.dumps(last_city)}"))

    handle = await scenario.say(2, buy)
    if (await handle.status()).status != "awaiting_confirmation":
        raise DemoError("the paid report did not pause for approval")
    for request in await handle.pending():
        console.print()
        for line in request_lines(handle.workflow_id, request, scenario.address, namespace):
            console.print(line)
        console.print()
        _step(console, f"approving {request.id} through the client (update adk_confirm_checked)")
        await handle.confirm(request.id, True)
    # Only an end counts: right after the answer the status may still read as paused.
    await scenario.settle(handle, until=("completed", "failed"))

    await scenario.say(3, update)


async def _print_outcome(
    console: Console, scenario: _Scenario, ui_url: str, session_id: str
) -> None:
    """What the scenario left: the artifacts, the session state and where the UI shows it."""
    console.print()
    _step(console, "artifacts")
    await scenario.print_versions(_REPORT, show_content=True)
    await scenario.print_versions(_LEDGER, show_content=True)
    console.print()
    _step(console, "session state")
    for key, value in sorted((await scenario.state()).items()):
        console.print(f"  {key} = {json.dumps(value, ensure_ascii=False)}")
    console.print()
    _step(console, "Temporal UI")
    console.print(f"  {ui_url}")
    session_query = f'AdkSession="{session_id}"'
    waiting_query = 'AdkStatus="awaiting_confirmation" AND ExecutionStatus="Running"'
    console.print(f"  this session's invocations: {workflows_url(ui_url, session_query)}")
    console.print(f"  runs waiting for approval: {workflows_url(ui_url, waiting_query)}")
    console.print()


async def run_demo(
    console: Console,
    *,
    port: int | None = None,
    ui_port: int | None = None,
    data_dir: Path | None = None,
    keep: asyncio.Event | None = None,
    payload_codec: PayloadCodec | None = None,
) -> None:
    """Run the seed scenario on an embedded dev server and an in-process worker.

    Args:
        console: Where everything is printed.
        port: The dev server's frontend port; a free one when ``None``.
        ui_port: The Temporal UI's port; a free one when ``None``.
        data_dir: Where sessions and artifacts are stored; a temporary directory when
            ``None`` (removed at the end).
        keep: When given, the server and worker keep running after the scenario until this
            event is set (Ctrl-C).
        payload_codec: Encodes every payload of the client and the worker (encryption:
            :class:`~adk_temporal.codec.EncryptionCodec`); ``None`` stores them as JSON.

    Raises:
        DemoError: An invocation failed or did not pause as scripted.
        DevServerError: The dev server could not start.
    """
    started = time.monotonic()
    session_id = f"demo-{uuid.uuid4().hex[:8]}"
    namespace = "default"
    async with AsyncExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="adk-temporal-demo-")))
        data = data_dir or tmp / "data"
        server = DevServer(
            db_filename=tmp / "temporal.db",
            port=port,
            ui_port=ui_port,
            log_path=tmp / "temporal.log",
        )
        _step(console, "starting Temporal's dev server…")
        await asyncio.to_thread(server.start)
        stack.push_async_callback(asyncio.to_thread, server.stop)
        console.print(f"  Temporal on {server.address} · UI {server.ui_url}")

        sessions = session_store(data)
        stack.push_async_callback(sessions.close)
        artifacts = artifact_store(data)
        adk = await AdkClient.connect(
            server.address,
            namespace=namespace,
            task_queue=DEFAULT_TASK_QUEUE,
            session_service=sessions,
            payload_codec=payload_codec,
        )
        app = App(agents=[build_weather_agent("scripted:weather")])
        worker = build_worker(
            adk.client,
            app,
            task_queue=DEFAULT_TASK_QUEUE,
            stores=Stores(sessions, artifacts),
        )
        await stack.enter_async_context(worker)
        _step(console, f"worker ready · agent {DEMO_AGENT} on scripted:weather · data {data}")
        if payload_codec is not None:
            console.print(
                f"  payloads in Temporal's history encoded by {type(payload_codec).__name__}"
            )
        console.print(f"  session {APP_NAME}/{DEMO_USER}/{session_id}")

        scenario = _Scenario(console, adk, sessions, artifacts, server.address, session_id)
        await _scenario(scenario, console, namespace)

        await _print_outcome(console, scenario, server.ui_url, session_id)
        _step(console, f"demo finished in {time.monotonic() - started:.1f}s")
        if keep is not None:
            _print_keep_hints(
                console, server.address, data, session_id, encrypted=payload_codec is not None
            )
            await keep.wait()
        _step(console, "stopping worker and server")


def _print_keep_hints(
    console: Console, address: str, data: Path, session_id: str, *, encrypted: bool
) -> None:
    commands: Iterable[str] = (
        f"adk-temporal run --address {address} --data-dir {shlex.quote(str(data))} "
        f"--app {APP_NAME} --agent {DEMO_AGENT} --user {DEMO_USER} --session {session_id} "
        f"{shlex.quote(DEMO_MESSAGES[1])}",
        f"adk-temporal pending --address {address}",
        f"adk-temporal events --data-dir {shlex.quote(str(data))} --app {APP_NAME} "
        f"--user {DEMO_USER} --session {session_id}",
    )
    console.print("  server and worker keep running; try, in another terminal:")
    for command in commands:
        console.print(Text(f"    {command}", style="bold"))
    if encrypted:
        console.print(
            "  payloads are encrypted: give `run` and `pending` the same --encryption-key-file "
            "(or ADK_ENCRYPTION_KEY_FILE)"
        )
    console.print("  Ctrl-C stops them.")
