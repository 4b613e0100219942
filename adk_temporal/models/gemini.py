"""``GeminiModel``: the Gemini API (or Vertex AI) through the google-genai client.

Failures are sorted for the Temporal activity layer, which owns retries:

* HTTP 408, 429, 5xx and transport failures (connection refused, reset, timeouts) raise
  :class:`~adk_temporal.errors.ModelUnavailableError` — retryable.
* A refused API key or missing credentials (HTTP 401, 403, a 400 about the key; no key at
  all) raise :class:`~adk_temporal.errors.ModelConfigurationError`, naming what to set: no
  attempt succeeds until the worker's configuration changes.
* Every other 4xx raises :class:`~adk_temporal.errors.ModelRequestError` — retrying the same
  request cannot help.
* A reply the API produced but that holds nothing usable (blocked prompt, candidate stopped
  for safety, no candidate, no parts) is returned as an :class:`LlmResponse` with
  ``error_code`` set, so the run can record it as an event instead of failing.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import AsyncGenerator, Iterator
from contextlib import contextmanager

from google import genai
from google.auth import exceptions as auth_exceptions
from google.genai import errors as genai_errors
from google.genai import types

from adk_temporal.errors import (
    ModelConfigurationError,
    ModelRequestError,
    ModelUnavailableError,
)
from adk_temporal.models.llm import LlmRequest, LlmResponse
from adk_temporal.models.retry_after import retry_after_seconds

__all__ = ["GeminiModel"]

# 408 is a server-side timeout and 429 a quota refusal: both 4xx, both worth retrying.
_RETRYABLE_4XX = frozenset({408, 429})

_NORMAL_FINISH_REASONS = frozenset({"STOP", "MAX_TOKENS", "FINISH_REASON_UNSPECIFIED"})

_CREDENTIALS_4XX = frozenset({401, 403})
"""Statuses that refuse the caller, not the request: the key or its project's rights."""

SET_CREDENTIALS = (
    "set GOOGLE_API_KEY (or GEMINI_API_KEY) in the worker's environment to a valid Gemini API "
    "key, pass GeminiModel(api_key=...), or use Vertex AI (GOOGLE_GENAI_USE_VERTEXAI=true "
    "with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION), then restart the worker"
)
"""What a worker's operator does about missing or refused Gemini credentials."""


def _transport_error_types() -> tuple[type[BaseException], ...]:
    # google-genai talks through httpx, its fork httpx2, or aiohttp, whichever is
    # installed; each raises its own transport errors and none of them may be imported
    # unconditionally.
    found: list[type[BaseException]] = [OSError, TimeoutError, auth_exceptions.TransportError]
    for module_name, class_name in (
        ("httpx", "TransportError"),
        ("httpx2", "TransportError"),
        ("aiohttp", "ClientError"),
    ):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        found.append(getattr(module, class_name))
    return tuple(found)


_TRANSPORT_ERRORS = _transport_error_types()


class GeminiModel:
    """A Gemini model called through ``client.aio.models.generate_content`` (or its stream).

    Credentials come from the arguments or, when none are given, from the environment as
    google-genai reads it: ``GOOGLE_API_KEY`` / ``GEMINI_API_KEY`` for the Gemini API, or
    ``GOOGLE_GENAI_USE_VERTEXAI`` with ``GOOGLE_CLOUD_PROJECT`` and
    ``GOOGLE_CLOUD_LOCATION`` for Vertex AI. A client built here makes exactly one HTTP
    attempt per call: retries belong to the Temporal activity, and a client-side retry loop
    inside it would multiply every retry and hide 429s from the retry policy.

    Args:
        model_name: The model to call, e.g. ``gemini-2.5-flash``.
        api_key: A Gemini API key; overrides the environment.
        base_url: Another endpoint, e.g. a proxy or a local fake server.
        client: A ready ``genai.Client``; its own HTTP and retry settings are used as they
            are. Cannot be combined with the connection arguments.
        api_version: The API version path segment (google-genai's default when ``None``).
        timeout: Seconds before one HTTP call is abandoned (no limit when ``None``).

    Raises:
        ValueError: ``client`` was given together with connection arguments.
        ModelConfigurationError: google-genai found no credentials (no API key and Vertex
            AI not configured); a ``ValueError`` too.
    """

    def __init__(
        self,
        model_name: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: genai.Client | None = None,
        api_version: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self._name = model_name
        if client is not None:
            if any(v is not None for v in (api_key, base_url, api_version, timeout)):
                raise ValueError(
                    "GeminiModel: pass either client or api_key/base_url/api_version/timeout, "
                    "not both; configure the client's HttpOptions instead"
                )
            self._client = client
            self._owns_client = False
            return
        http_options = types.HttpOptions(
            base_url=base_url,
            api_version=api_version,
            timeout=None if timeout is None else round(timeout * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        try:
            self._client = genai.Client(api_key=api_key, http_options=http_options)
        except ValueError as exc:
            # Raised inside a step (models are built on first use), a plain ValueError was
            # retried for ~5.5 minutes before the run failed; nothing changes between tries.
            raise ModelConfigurationError(
                None, f"{model_name}: no credentials for the Gemini API ({exc}): {SET_CREDENTIALS}"
            ) from exc
        self._owns_client = True

    @property
    def name(self) -> str:
        """The model name sent to the API."""
        return self._name

    async def aclose(self) -> None:
        """Close the HTTP pools of the client built here; a client passed in is the caller's."""
        if self._owns_client:
            self._client.close()
            await self._client.aio.aclose()

    def __repr__(self) -> str:
        # Deliberately omits the client: its repr could expose the API key in logs.
        return f"GeminiModel({self._name!r})"

    async def generate(self, request: LlmRequest) -> LlmResponse:
        """Call the model once.

        ``request.model`` is informational; the call always goes to this model's name.

        Args:
            request: The conversation, system instruction, tools and generation settings.

        Returns:
            The reply; ``error_code``/``error_message`` are set (and ``content`` is
            ``None``) when the prompt or candidate was blocked or came back empty.

        Raises:
            ModelUnavailableError: HTTP 408, 429 or 5xx, or a transport failure or timeout.
            ModelConfigurationError: HTTP 401 or 403, or a 400 about the API key.
            ModelRequestError: Any other HTTP 4xx.
        """
        with _translated_errors():
            response = await self._client.aio.models.generate_content(
                model=self._name, contents=request.contents, config=_config_for(request)
            )
        return _to_llm_response(response)

    async def generate_stream(self, request: LlmRequest) -> AsyncGenerator[LlmResponse, None]:
        """Call the model once through ``generate_content_stream``, yielding as it replies.

        Each chunk of the API's stream that holds text is yielded as a partial response
        carrying only that chunk's text parts. The last item is the aggregated reply with
        ``partial=False``, the same :class:`LlmResponse` :meth:`generate` returns for the
        same reply (blocked and empty replies included). Function calls arrive only in it.

        Args:
            request: The conversation, system instruction, tools and generation settings.

        Yields:
            Partial text chunks in the order received, then the complete reply.

        Raises:
            ModelUnavailableError: HTTP 408, 429 or 5xx (when the stream opens or as an error
                event within it), or a transport failure or timeout, even mid-stream.
            ModelConfigurationError: HTTP 401 or 403, or a 400 about the API key.
            ModelRequestError: Any other HTTP 4xx.
        """
        with _translated_errors():
            stream = await self._client.aio.models.generate_content_stream(
                model=self._name, contents=request.contents, config=_config_for(request)
            )
        aggregate = _StreamAggregate()
        try:
            while True:
                # Only the fetch is translated: an exception thrown into this generator
                # at a yield is the consumer's, not the API's.
                with _translated_errors():
                    try:
                        chunk = await anext(stream)
                    except StopAsyncIteration:
                        break
                delta = aggregate.add(chunk)
                if delta:
                    yield LlmResponse(
                        content=types.Content(role="model", parts=delta), partial=True
                    )
        finally:
            # A consumer that stops early must not leave the HTTP response open.
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
        yield _to_llm_response(aggregate.response())


@contextmanager
def _translated_errors() -> Iterator[None]:
    """Re-raise the client's HTTP and transport failures as the runtime's typed errors."""
    try:
        yield
    except genai_errors.APIError as exc:
        status: int | None = exc.code
        message = exc.message or str(exc)
        if status is None or status in _RETRYABLE_4XX or status >= 500:
            headers = getattr(exc.response, "headers", None)
            wait = retry_after_seconds(headers, exc.details, now=time.time())
            raise ModelUnavailableError(status, message, retry_after=wait) from exc
        if status in _CREDENTIALS_4XX or _names_the_key(exc.details, message):
            raise ModelConfigurationError(
                status, f"the Gemini API refused the credentials ({message}): {SET_CREDENTIALS}"
            ) from exc
        raise ModelRequestError(status, message) from exc
    except _TRANSPORT_ERRORS as exc:
        raise ModelUnavailableError(None, f"{type(exc).__name__}: {exc}") from exc


def _names_the_key(body: object, message: str) -> bool:
    """Whether a 400 is about the API key rather than the request: the API answers an
    invalid or expired key with ``INVALID_ARGUMENT`` and an ``API_KEY_*`` reason."""
    error = body.get("error", body) if isinstance(body, dict) else {}
    details = error.get("details") if isinstance(error, dict) else None
    reasons = [d.get("reason", "") for d in details or [] if isinstance(d, dict)]
    return any(str(r).startswith("API_KEY_") for r in reasons) or "api key" in message.lower()


class _StreamAggregate:
    """Folds the chunks of a streamed reply into the response a single call would return."""

    def __init__(self) -> None:
        self._parts: list[types.Part] = []
        self._role: str | None = None
        self._finish_reason: types.FinishReason | None = None
        self._finish_message: str | None = None
        self._usage: types.GenerateContentResponseUsageMetadata | None = None
        self._feedback: types.GenerateContentResponsePromptFeedback | None = None
        self._candidate_seen = False

    def add(self, chunk: types.GenerateContentResponse) -> list[types.Part]:
        """Fold in one chunk; returns its text parts (the delta to stream), maybe empty."""
        # Usage is cumulative in every chunk that has it, so the last one is the total.
        if chunk.usage_metadata is not None:
            self._usage = chunk.usage_metadata
        if chunk.prompt_feedback is not None:
            self._feedback = chunk.prompt_feedback
        if not chunk.candidates:
            return []
        self._candidate_seen = True
        candidate = chunk.candidates[0]
        if candidate.finish_reason is not None:
            self._finish_reason = candidate.finish_reason
        if candidate.finish_message is not None:
            self._finish_message = candidate.finish_message
        content = candidate.content
        if content is None:
            return []
        self._role = content.role or self._role
        delta: list[types.Part] = []
        for part in content.parts or ():
            if part.text:
                delta.append(part)
            self._append(part)
        return delta

    def _append(self, part: types.Part) -> None:
        last = self._parts[-1] if self._parts else None
        # Text deltas join into one part (thoughts apart from the answer), as the
        # non-streamed API returns them; anything else (a function call) stays a part of its own.
        if (
            last is not None
            and _is_text(last)
            and _is_text(part)
            and bool(last.thought) == bool(part.thought)
        ):
            self._parts[-1] = last.model_copy(
                update={
                    "text": (last.text or "") + (part.text or ""),
                    "thought_signature": part.thought_signature or last.thought_signature,
                }
            )
        elif not (part.text == "" and part.thought_signature is None):
            # An empty text part (the API may close a stream with one) adds nothing.
            self._parts.append(part)

    def response(self) -> types.GenerateContentResponse:
        """The aggregated reply, in the shape ``generate_content`` returns."""
        candidates: list[types.Candidate] | None = None
        if self._candidate_seen:
            candidates = [
                types.Candidate(
                    content=types.Content(role=self._role, parts=self._parts)
                    if self._parts
                    else None,
                    finish_reason=self._finish_reason,
                    finish_message=self._finish_message,
                )
            ]
        return types.GenerateContentResponse(
            candidates=candidates, usage_metadata=self._usage, prompt_feedback=self._feedback
        )


def _is_text(part: types.Part) -> bool:
    """Whether ``part`` holds text and nothing else a reply can carry."""
    return part.text is not None and part.function_call is None


def _config_for(request: LlmRequest) -> types.GenerateContentConfig:
    config = (
        request.generation_config.model_copy(deep=True)
        if request.generation_config is not None
        else types.GenerateContentConfig()
    )
    if request.system_instruction is not None:
        config.system_instruction = request.system_instruction
    if request.tools:
        config.tools = [
            *(config.tools or []),
            types.Tool(function_declarations=list(request.tools)),
        ]
    # The runtime executes tools itself, durably; google-genai must never call them.
    config.automatic_function_calling = types.AutomaticFunctionCallingConfig(disable=True)
    return config


def _reason_name(reason: object) -> str:
    return str(getattr(reason, "value", reason))


def _to_llm_response(response: types.GenerateContentResponse) -> LlmResponse:
    usage = response.usage_metadata
    if not response.candidates:
        feedback = response.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            reason = _reason_name(feedback.block_reason)
            detail = feedback.block_reason_message or "no details given"
            return LlmResponse(
                usage=usage,
                error_code=reason,
                error_message=f"the prompt was blocked ({reason}): {detail}",
            )
        return LlmResponse(
            usage=usage,
            error_code="EMPTY_RESPONSE",
            error_message="the model returned no candidates",
        )
    candidate = response.candidates[0]
    finish = _reason_name(candidate.finish_reason) if candidate.finish_reason else None
    if finish is not None and finish not in _NORMAL_FINISH_REASONS:
        detail = candidate.finish_message or "no details given"
        return LlmResponse(
            finish_reason=finish,
            usage=usage,
            error_code=finish,
            error_message=f"the model stopped the reply ({finish}): {detail}",
        )
    content = candidate.content
    if content is None or not content.parts:
        return LlmResponse(
            finish_reason=finish,
            usage=usage,
            error_code="EMPTY_RESPONSE",
            error_message="the model returned a candidate without content",
        )
    if content.role is None:
        content = content.model_copy(update={"role": "model"})
    return LlmResponse(content=content, finish_reason=finish, usage=usage)
