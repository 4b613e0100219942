"""A sample A2A agent built with a2a-sdk's own server (not adk-temporal's), for the remote
agent's tests and replay histories: it books a table after asking for how many people, or
pays after asking for approval the way an adk-temporal server asks (a request data part)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from a2a.helpers.proto_helpers import new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part, TaskState
from starlette.applications import Starlette

from adk_temporal.a2a.wire import AskedRequest, answer_parts
from adk_temporal.confirmation import call_digest
from adk_temporal.ports import free_port

PAY_REQUEST = AskedRequest(
    kind="confirmation",
    request_id="r-pay",
    function_call_id="far-call-1",
    tool="pay",
    args={"amount": 5},
    hint="Approve paying 5?",
    call_digest=call_digest("pay", {"amount": 5}),
)
"""What the sample asks before it pays, as an adk-temporal server would."""


class Booking(AgentExecutor):
    """Asks, then books or pays; remembers every run and every completed task."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, str]] = []
        self.completed: list[str] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None and context.context_id is not None
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        said = context.get_user_input()
        self.runs.append((context.task_id, said))
        current = context.current_task
        if current is None:
            submitted = new_task(
                context.task_id, context.context_id, TaskState.TASK_STATE_SUBMITTED
            )
            await event_queue.enqueue_event(submitted)
        if current is None or current.status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
            await updater.requires_input(updater.new_agent_message(self._ask(said)))
            return
        message = context.message
        answers = answer_parts(message.parts) if message is not None else []
        if answers:
            [answer] = answers
            approved = answer.confirmed and answer.call_digest == PAY_REQUEST.call_digest
            reply = "Paid 5." if approved else "Not paid."
        else:
            reply = f"Booked a table for {said}."
        await updater.add_artifact([new_text_part(reply)], name="reply")
        await updater.complete()
        self.completed.append(context.task_id)

    @staticmethod
    def _ask(said: str) -> list[Part]:
        if "pay" in said:
            return [new_text_part(PAY_REQUEST.hint), PAY_REQUEST.part()]
        return [new_text_part("For how many people?")]

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


@asynccontextmanager
async def booking_server() -> AsyncIterator[tuple[str, Booking]]:
    """The sample agent served by a2a-sdk's own handler and routes on a free port: its card
    URL and its executor."""
    port = free_port()
    card = AgentCard(
        name="booking",
        description="Books tables and pays.",
        version="1",
        supported_interfaces=[
            AgentInterface(
                url=f"http://127.0.0.1:{port}/", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="book", name="book", description="Book a table.", tags=["food"])],
    )
    executor = Booking()
    handler = DefaultRequestHandler(executor, InMemoryTaskStore(), card)
    app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    serving = asyncio.create_task(server.serve())
    async with asyncio.timeout(30):
        while not server.started:
            await asyncio.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/.well-known/agent-card.json", executor
    finally:
        server.should_exit = True
        await serving
