"""Models: the ``Model`` protocols, their registry, the Gemini model and the scripted one."""

from __future__ import annotations

from adk_temporal.models.base import (
    Model,
    ModelFactory,
    ModelRegistry,
    StreamingModel,
    default_registry,
    stream_model,
)
from adk_temporal.models.gemini import GeminiModel
from adk_temporal.models.llm import LlmRequest, LlmResponse
from adk_temporal.models.scripted import (
    DEFAULT_FALLBACK_TEXT,
    ScriptedCall,
    ScriptedModel,
    ScriptedReply,
    ScriptedRule,
    SummaryTemplate,
    weather_model,
    weather_rules,
    weather_summaries,
)

__all__ = [
    "DEFAULT_FALLBACK_TEXT",
    "GeminiModel",
    "LlmRequest",
    "LlmResponse",
    "Model",
    "ModelFactory",
    "ModelRegistry",
    "ScriptedCall",
    "ScriptedModel",
    "ScriptedReply",
    "ScriptedRule",
    "StreamingModel",
    "SummaryTemplate",
    "default_registry",
    "stream_model",
    "weather_model",
    "weather_rules",
    "weather_summaries",
]
