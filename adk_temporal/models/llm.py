"""The request a model step sends and the response it gets back, independent of any vendor.

Both are pydantic models built from ``google.genai.types`` so they serialise with the
pydantic data converter. Neither ever holds credentials: API keys live in the model object
that talks to the API, which never crosses a process or Temporal boundary.
"""

from __future__ import annotations

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["LlmRequest", "LlmResponse"]


class LlmRequest(BaseModel):
    """One model call: the conversation so far plus what the model may do next.

    ``system_instruction`` and ``tools`` take precedence over the same settings inside
    ``generation_config``; function declarations are added to any tools the config already
    lists (for example a built-in search tool).
    """

    model_config = ConfigDict(extra="forbid")

    model: str
    contents: list[types.Content] = Field(default_factory=list)
    system_instruction: str | None = None
    tools: list[types.FunctionDeclaration] = Field(default_factory=list)
    generation_config: types.GenerateContentConfig | None = None


class LlmResponse(BaseModel):
    """One model reply: content, or an error the model API reported without failing the call.

    ``error_code`` is set when the API answered but produced nothing usable — a blocked
    prompt, a candidate stopped for safety, an empty candidate. Transport and HTTP failures
    are raised as exceptions instead (see ``adk_temporal.errors``).

    ``partial`` marks a chunk of a streamed reply: it carries only the text that is new
    since the previous chunk. The last response of a stream has ``partial=False`` and holds
    the whole reply, exactly as a non-streamed call returns it.
    """

    model_config = ConfigDict(extra="forbid")

    content: types.Content | None = None
    finish_reason: str | None = None
    usage: types.GenerateContentResponseUsageMetadata | None = None
    error_code: str | None = None
    error_message: str | None = None
    partial: bool = False

    def parts(self) -> list[types.Part]:
        """The content's parts, or an empty list."""
        if self.content is None or not self.content.parts:
            return []
        return list(self.content.parts)

    def function_calls(self) -> list[types.FunctionCall]:
        """The function calls of the reply, in the model's order."""
        return [p.function_call for p in self.parts() if p.function_call is not None]

    def text(self) -> str:
        """The concatenated text parts, thoughts excluded."""
        return "".join(p.text for p in self.parts() if p.text and not p.thought)
