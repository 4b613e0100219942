"""An agent's final answer as output: validated against ``output_schema``, kept under
``output_key``.

As in ADK, the output is the text of the agent's final model event (thoughts left out). It
lands in that event's ``state_delta``, so it is stored with the answer in one append. A
reply without content (or parts) writes nothing, as does an empty answer with a schema.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from .agents import Agent
from .errors import OutputSchemaError
from .events import Event

__all__ = ["record_output"]


def _problems(err: ValidationError) -> list[str]:
    return [f"{'.'.join(str(x) for x in e['loc']) or '<root>'}: {e['msg']}" for e in err.errors()]


def record_output(agent: Agent, event: Event) -> Any:
    """Validate and store the output of ``agent``'s final model ``event``, in place.

    Returns:
        The value ``output_schema`` validated, or ``None`` (no schema, or no answer).

    Raises:
        OutputSchemaError: The agent has an ``output_schema`` and the answer is not JSON of
            it; nothing was added to the event's state delta.
    """
    # ADK-Go's maybeSaveOutputToState: no content, no output; an earlier value stays.
    if (agent.output_key is None and agent.output_schema is None) or not event.parts():
        return None
    text = event.text()
    value: Any = text
    if agent.output_schema is not None:
        if not text.strip():
            return None
        try:
            parsed = agent.output_schema.model_validate_json(text)
        except ValidationError as err:
            schema = agent.output_schema.__name__
            raise OutputSchemaError(agent.name, schema, _problems(err)) from None
        value = parsed.model_dump(mode="json", exclude_none=True)
    if agent.output_key is not None:
        event.actions.state_delta[agent.output_key] = value
    return value if agent.output_schema is not None else None
