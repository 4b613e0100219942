"""Running one page's blocks in order, as a reader pasting them would.

A page runs in a directory of its own that is also ``$HOME``, so the CLI's default data
directory (``~/.adk-temporal``) and every file a block writes belong to that page. Commands
run with this interpreter's ``bin/`` first on ``PATH``: the one installed environment, never
a new one. Python blocks share one namespace per page and may ``await`` at top level.
Blocks that need a server get the suite's dev server: ``localhost:7233`` in them stands for
its address, and a worker for the block's app polls the default task queue with the
page's stores; the page's runs are terminated when it ends.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from temporalio.client import Client

from adk_temporal.app import Stores, load_app
from adk_temporal.codec import EncryptionCodec
from adk_temporal.converter import adk_data_converter
from adk_temporal.devserver import DevServer
from adk_temporal.ids import DEFAULT_TASK_QUEUE
from adk_temporal.visibility import task_queue_clause
from adk_temporal.worker import AdkWorker, artifact_store, build_worker, session_store

from ..commands import offline_env
from .blocks import SHELL, Block

__all__ = ["EXAMPLES_APP", "PageRun"]

EXAMPLES_APP = "adk_temporal.examples.weather:app"
"""The app a server block's worker serves unless its marker names another."""
DEFAULT_ADDRESS = "localhost:7233"


@dataclass
class PageRun:
    """One page's directory, namespace, and (once a block needs it) server and worker."""

    home: Path
    server: Callable[[], DevServer]
    namespace: dict[str, Any] = field(default_factory=dict)
    ran: list[str] = field(default_factory=list)
    _client: Client | None = None
    _worker_app: tuple[str, str | None] | None = None
    _worker: AdkWorker | None = None

    def env(self, address: str | None) -> dict[str, str]:
        """The environment of the page's commands."""
        env = offline_env()
        # A reader's own secret would make the receiver example serve instead of refuse.
        env.pop("ADK_NOTIFY_SECRET", None)
        env["HOME"] = str(self.home)
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        if address is not None:
            env["TEMPORAL_ADDRESS"] = address
        return env

    async def run(self, block: Block) -> None:
        """Run ``block`` (its marker says how), raising AssertionError when it fails."""
        address = await self._serve(block) if "needs-server" in block.flags else None
        code = block.code if address is None else block.code.replace(DEFAULT_ADDRESS, address)
        if "file" in block.options:
            (self.home / block.options["file"]).write_text(code)
        if block.lang in SHELL:
            await self._shell(block, code, address)
        else:
            await self._python(block, code)
        self.ran.append(block.where)

    async def _shell(self, block: Block, code: str, address: str | None) -> None:
        result = await asyncio.to_thread(
            subprocess.run,
            ["bash", "-e", "-o", "pipefail", "-c", code],
            cwd=self.home,
            env=self.env(address),
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert result.returncode == block.expected_exit, (
            f"{block.where} exited {result.returncode}, expected {block.expected_exit}\n"
            f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
        )

    async def _python(self, block: Block, code: str) -> None:
        # As a script runs it: no top-level await (a reader pastes the block into a file),
        # and on a thread of its own, where its asyncio.run starts a loop of its own.
        compiled = compile(code, block.where, "exec")
        self.namespace.setdefault("__name__", "__doc_block__")
        saved_cwd, saved_env = os.getcwd(), dict(os.environ)
        # Relative paths and ~ in an example mean the reader's directory: the page's. What a
        # block sets in the environment ends with it.
        os.chdir(self.home)
        os.environ.clear()
        os.environ.update(self.env(None))
        try:
            await asyncio.to_thread(exec, compiled, self.namespace)
        finally:
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)

    async def _serve(self, block: Block) -> str:
        server = self.server()
        wanted = (block.options.get("worker", EXAMPLES_APP), block.options.get("key-file"))
        if wanted != self._worker_app:
            await self._stop_worker()
            self._client = await self._connect(server.address, wanted[1])
            self._worker = await self._start_worker(self._client, wanted[0])
            self._worker_app = wanted
        return server.address

    async def _connect(self, address: str, key_file: str | None) -> Client:
        # A page whose runs are sealed needs a worker that holds the page's key.
        codec = None if key_file is None else EncryptionCodec.from_file(self.home / key_file)
        return await Client.connect(address, data_converter=adk_data_converter(codec=codec))

    async def _start_worker(self, client: Client, spec: str) -> AdkWorker:
        sys.path.insert(0, str(self.home))
        try:
            app = load_app(spec)
        finally:
            sys.path.remove(str(self.home))
        data = self.home / ".adk-temporal"
        worker = build_worker(
            client,
            app,
            task_queue=DEFAULT_TASK_QUEUE,
            stores=Stores(session_store(data), artifact_store(data)),
            max_cached_workflows=0,
        )
        await worker.__aenter__()
        return worker

    async def _stop_worker(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            await worker.__aexit__(None, None, None)

    async def close(self) -> None:
        """Stop the worker and terminate what the page left running on the default queue."""
        await self._stop_worker()
        if self._client is not None:
            # The default queue and the apps' own queues beside it, where named apps' runs start.
            query = f'{task_queue_clause(DEFAULT_TASK_QUEUE)} AND ExecutionStatus = "Running"'
            async for run in self._client.list_workflows(query):
                await self._client.get_workflow_handle(run.id).terminate("the page ended")
        for name in [n for n, m in sys.modules.items() if _loaded_from(m, self.home)]:
            del sys.modules[name]


def _loaded_from(module: object, home: Path) -> bool:
    # Modules a page wrote (myagents.py) must not leak into the next page under that name.
    path = getattr(module, "__file__", None)
    return path is not None and Path(path).is_relative_to(home)
