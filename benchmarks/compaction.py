"""Compaction: does the model's input stay flat over a 200-turn session?

One scripted session of N turns (default 200) on the in-process runner (the same flow and
steps Temporal runs; the model's input does not depend on the engine), run twice: with
events compaction off, and on (every 10 invocations, overlap 1). The scripted model answers
each turn with ~200 bytes and each summary with ~600 bytes, and reports as its usage the
request's size in tokens (bytes / 4, as a tokenizer of English roughly does). Printed: the
model input of turns 20 and N in tokens (from the model's usage) and in bytes, their ratio,
and compaction's own cost (summarizer calls and tokens). Target: with compaction on, turn
N's input ≤ 1.3 × turn 20's.

Run: ``python benchmarks/compaction.py [--turns 200]`` (writes results/compaction.json).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path

from google.genai import types

from adk_temporal.agents import Agent
from adk_temporal.app import App, Stores
from adk_temporal.compaction import DEFAULT_COMPACTION_PROMPT, EventsCompactionConfig
from adk_temporal.models import LlmRequest, LlmResponse, ModelRegistry
from adk_temporal.runner import Runner
from adk_temporal.sessions import InMemorySessionService

RESULTS = Path(__file__).parent / "results" / "compaction.json"


@dataclass
class CountingModel:
    """Answers turns and summaries with fixed-size text; usage = request bytes / 4."""

    turn_inputs: list[tuple[int, int]] = field(default_factory=list)
    """(tokens, bytes) of each agent turn's request."""
    summary_tokens: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The model name."""
        return "counting"

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """A summary when asked for one, else the turn's answer."""
        size = len(json.dumps([c.model_dump(mode="json") for c in request.contents]))
        tokens = size // 4
        first = (request.contents[0].parts or [types.Part()])[0].text or ""
        if first.startswith(DEFAULT_COMPACTION_PROMPT):
            self.summary_tokens.append(tokens)
            text = "Summary: " + "the user asked about cities and got answers. " * 13
        else:
            self.turn_inputs.append((tokens, size))
            text = f"Answer {len(self.turn_inputs)}: " + "the weather is mild today. " * 7
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=tokens, candidates_token_count=len(text) // 4
        )
        return LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=text)]), usage=usage
        )


async def _session(turns: int, config: EventsCompactionConfig | None) -> CountingModel:
    model = CountingModel()
    models = ModelRegistry()
    models.register("counting", lambda _name: model)
    runner = Runner(
        App(
            [Agent(name="agent", model="counting")], models=models, events_compaction_config=config
        ),
        stores=Stores(InMemorySessionService()),
    )
    for turn in range(1, turns + 1):
        result = await runner.run("bench", "u", "s", "agent", f"What about city number {turn}?")
        assert result.status == "completed", result
    return model


def _row(label: str, model: CountingModel, turns: int) -> dict[str, float]:
    (t20, b20), (tn, bn) = model.turn_inputs[19], model.turn_inputs[turns - 1]
    row = {
        "turn20_tokens": t20,
        "turn20_bytes": b20,
        f"turn{turns}_tokens": tn,
        f"turn{turns}_bytes": bn,
        "ratio_tokens": round(tn / t20, 2),
        "ratio_bytes": round(bn / b20, 2),
        "summary_calls": len(model.summary_tokens),
        "summary_input_tokens": sum(model.summary_tokens),
    }
    print(
        f"{label:<15} turn 20: {t20:>6} tok {b20:>7} B   turn {turns}: {tn:>6} tok {bn:>7} B   "
        f"ratio {row['ratio_tokens']:>5} (tokens) {row['ratio_bytes']:>5} (bytes)   "
        f"compaction: {row['summary_calls']} calls, {row['summary_input_tokens']} input tokens"
    )
    return row


async def main() -> None:
    """Run the session with compaction off and on; print and save the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    config = EventsCompactionConfig(compaction_interval=10, overlap_size=1)
    rows = {
        "off": _row("compaction off", await _session(args.turns, None), args.turns),
        "on": _row("compaction on", await _session(args.turns, config), args.turns),
    }
    print(f"target: with compaction on, turn {args.turns} input <= 1.3 x turn 20")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
