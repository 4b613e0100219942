"""Compaction receipts and redaction of summaries on the in-process runner.

A redaction callback (``App.on_event``) sees every stored event and the summary too: a card
number planted in turn 3 is in no stored event and in no stored summary — also when the
callback came after turn 3 was stored raw and the summarizer repeats the card. Each
compaction's receipt names its range, and its digest matches the stored events it folded
(and stops matching when one of them changes); a confirmation still open when a
compaction is made is listed as kept out of it.
"""

from __future__ import annotations

import uuid

from adk_temporal.agents import Agent
from adk_temporal.app import App, Stores
from adk_temporal.compaction import EventsCompactionConfig, check_receipt
from adk_temporal.events import Event
from adk_temporal.ids import SessionKey
from adk_temporal.runner import Runner
from adk_temporal.sessions import InMemorySessionService
from adk_temporal.summarizers import FunctionSummarizer
from tests.adk_models import queue_registry
from tests.compaction_app import CARD, CONFIG, compaction_app, mask_cards

from .conftest import LocalFactory

APP, USER = "app", "u-1"


def verbatim(text: str) -> str:
    """A summarizer that repeats what it read: whatever it was shown, the summary holds."""
    return "SUMMARY " + text[-400:]


def _stored_text(events: list[Event]) -> str:
    return "\n".join(e.model_dump_json() for e in events)


async def test_a_card_in_turn_3_is_in_no_stored_event_or_summary(run_local: LocalFactory) -> None:
    """With the callback registered, turn 3's card is masked where it is stored; the
    compaction after it summarises the masked text, and the stored summary holds no card."""
    models, _ = queue_registry("m", ["a1", "a2", "a3", "a4"])
    models.register("verbatim", lambda name: FunctionSummarizer(name, verbatim))
    config = EventsCompactionConfig(compaction_interval=3, summarizer_model="verbatim")
    key = SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")
    async with run_local(
        [Agent(name="agent", model="m")],
        models=models,
        events_compaction_config=config,
        on_event=[mask_cards],
    ) as rt:
        for message in ("one", "two", f"my card is {CARD}", "four"):
            assert (await rt.adk.run(*key, "agent", message)).status == "completed"
        stored = (await rt.sessions.get(key)).events
    [compaction] = [e.actions.compaction for e in stored if e.actions.compaction]
    summary = "".join(p.text or "" for p in compaction.compacted_content.parts or [])
    assert "[card]" in summary and CARD not in _stored_text(stored)


async def test_a_summary_is_redacted_even_of_text_stored_before_the_callback(
    run_local: LocalFactory,
) -> None:
    """Turn 3 stored raw (no callback yet), then the app registers one: the summarizer
    reads the card and repeats it, and the stored summary still holds none."""
    sessions = InMemorySessionService()
    models, _ = queue_registry("m", ["a1", "a2", "a3", "a4"])
    models.register("verbatim", lambda name: FunctionSummarizer(name, verbatim))
    agents = [Agent(name="agent", model="m")]
    key = SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")
    before = Runner(App(agents, models=models), stores=Stores(sessions))
    for message in ("one", "two", f"my card is {CARD}"):
        assert (await before.run(*key, "agent", message)).status == "completed"
    config = EventsCompactionConfig(compaction_interval=3, summarizer_model="verbatim")
    after = Runner(
        App(agents, models=models, events_compaction_config=config, on_event=[mask_cards]),
        stores=Stores(sessions),
    )
    assert (await after.run(*key, "agent", "four")).status == "completed"
    stored = (await sessions.get(key)).events
    [event] = [e for e in stored if e.actions.compaction]
    assert event.actions.compaction is not None
    summary = "".join(p.text or "" for p in event.actions.compaction.compacted_content.parts or [])
    assert summary.startswith("SUMMARY") and "[card]" in summary and CARD not in summary
    assert any(CARD in e.text() for e in stored)  # the raw turn stays as it was stored


async def test_each_receipt_matches_the_events_it_folded(run_local: LocalFactory) -> None:
    """Six turns, a compaction every two: each receipt names its range and token counts,
    its digest matches the stored events, and an edited event makes it mismatch."""
    models, _ = queue_registry("m", [f"answer {n}" for n in range(1, 7)])
    models.register("short", lambda name: FunctionSummarizer(name, lambda text: "summary"))
    config = EventsCompactionConfig(compaction_interval=2, summarizer_model="short")
    key = SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")
    async with run_local(
        [Agent(name="agent", model="m")], models=models, events_compaction_config=config
    ) as rt:
        for n in range(1, 7):
            assert (await rt.adk.run(*key, "agent", f"turn {n}")).status == "completed"
        stored = (await rt.sessions.get(key)).events
    compactions = [e for e in stored if e.actions.compaction is not None]
    assert len(compactions) >= 2
    for event in compactions:
        check = check_receipt(stored, event.id)
        receipt = check.receipt
        assert check.ok and receipt is not None, check
        assert receipt.first_event_id == stored[0].id and check.event_count == receipt.event_count
        assert receipt.tokens_before > receipt.tokens_after > 0
        assert receipt.tokens_counted_by == "estimate"  # the function reports no usage
    tampered = [e.model_copy(deep=True) for e in stored]
    tampered[1] = tampered[1].model_copy(update={"author": "someone-else"})
    assert not check_receipt(tampered, compactions[0].id).ok


async def test_an_open_confirmation_is_listed_as_kept(run_local: LocalFactory) -> None:
    """The compaction made while ``pay`` waits for its approval lists that confirmation
    request, and only it, as kept out of its range."""
    made = compaction_app()
    key = SessionKey(APP, USER, f"s-{uuid.uuid4().hex[:8]}")
    async with run_local([made.agent], models=made.models, events_compaction_config=CONFIG) as rt:
        assert (await rt.adk.run(*key, "payer", "hi")).status == "completed"
        handle = await rt.adk.start(*key, "payer", "pay 5")
        await handle.wait_for_status("awaiting_confirmation", timeout=30)
        stored = (await rt.sessions.get(key)).events
        [event] = [e for e in stored if e.actions.compaction is not None]
        (request,) = await handle.pending()
        await handle.confirm(request.id, True)
        assert (await handle.result()).status == "completed"
    assert event.actions.compaction is not None and event.actions.compaction.receipt is not None
    kept = {(k.kind, k.name, k.call_id) for k in event.actions.compaction.receipt.kept_open}
    assert kept == {("confirmation", "pay", request.id)}
