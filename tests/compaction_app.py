"""An agent whose second turn waits for an approval when events compaction falls due."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.app import App
from adk_temporal.compaction import DEFAULT_COMPACTION_PROMPT, EventsCompactionConfig
from adk_temporal.events import Event
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry
from adk_temporal.tools import FunctionTool

from .adk_models import QueueModel, queue_registry

COMPACTION_APP = "compacting"
CONFIG = EventsCompactionConfig(compaction_interval=2)
"""Due at the second invocation: while its approval is pending."""


@dataclass
class CompactionApp:
    """The agent, its models, the model's requests, and the tool's runs."""

    agent: Agent
    models: ModelRegistry
    model: QueueModel
    paid: list[int] = field(default_factory=list)


def compaction_app() -> CompactionApp:
    """``hi`` is answered; ``pay 5`` calls ``pay`` (approval required), the summary of the
    first turn is made while it waits, then the model answers with the payment."""
    call = types.FunctionCall(name="pay", args={"amount": 5})
    models, model = queue_registry("queue", ["hello", call, "SUMMARY: greeted", "paid 5"])
    paid: list[int] = []

    def pay(amount: int) -> dict[str, int]:
        """Pay an amount."""
        paid.append(amount)
        return {"paid": amount}

    tool = FunctionTool(pay, require_confirmation=True)
    return CompactionApp(Agent(name="payer", model="queue", tools=[tool]), models, model, paid)


class EchoModel:
    """Answers a summarizer request with ``SUMMARY``, any other with ``echo: <last text>``:
    the same in every worker process."""

    @property
    def name(self) -> str:
        """The model name."""
        return "echo"

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """The reply for ``request``."""
        texts = [p.text for c in request.contents for p in c.parts or [] if p.text]
        first = texts[0] if texts else ""
        reply = "SUMMARY" if first.startswith(DEFAULT_COMPACTION_PROMPT) else f"echo: {texts[-1]}"
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=reply)]))


def crash_app() -> App:
    """An app compacting after every invocation, for worker processes (``--app``)."""
    models = ModelRegistry()
    models.register("echo", lambda _name: EchoModel())
    return App(
        agents=[Agent(name="echoer", model="echo")],
        models=models,
        events_compaction_config=EventsCompactionConfig(compaction_interval=1),
    )


CARD = "4111-1111-1111-1111"
"""A card number the redaction tests plant."""
_CARD = re.compile(r"\b(?:\d{4}-){3}\d{4}\b")


def mask_cards(event: Event) -> Event:
    """An ``on_event`` callback masking card numbers in an event's text parts (in place,
    on the copy it is given)."""
    for part in event.parts():
        if part.text:
            part.text = _CARD.sub("[card]", part.text)
    return event
