"""Instruction templates and providers: the text an agent's instruction stands for in one context.

ADK's rules (ADK-Go ``internal/llminternal/instruction_processor.go``; ADK-Python
``utils/instructions_utils.py``; where they disagree, ADK-Go's):

* A string instruction is a template. Each brace group (``{+[^{}]*}+``, so ``{{x}}`` is one
  group) is read with its braces and surrounding spaces stripped; a trailing ``?`` makes it
  optional.
* ``{artifact.NAME}`` is the text of the latest version of artifact ``NAME`` (``""`` for a
  part without text); optional and missing: ``""``.
* ``{key}`` is the state value of ``key`` — a Python identifier, optionally after ``app:``,
  ``user:`` or ``temp:`` — as ``str(value)``, ``""`` for ``None``; optional and missing:
  ``""``. Any other group (``{invalid-key}``, ``{a:b}``, ``{'k': 'v'}``) is left as written.
* ``{key.field.sub}`` reads a nested value of a state dict, each segment a name; a ``?`` after
  any segment (``{customer?.preferences.alias}``) makes it optional. A path that does not
  resolve is ``""`` when optional and left as written otherwise (ADK-Python
  ``tests/unittests/flows/llm_flows/test_instructions.py`` ``test_build_system_instruction``
  and ``test_nested_templating``; google-adk 2.13's regex engine leaves every such group as
  written).
* A missing key or artifact that is not optional raises :class:`InstructionKeyError`; so does
  an artifact placeholder, optional or not, when the runtime has no artifact service.
* An instruction may instead be a provider: a sync or async function of the
  :class:`ReadonlyContext` returning the text, which is used as it is (not templated; a
  provider that wants templating calls :func:`inject_session_state`).
* The root agent's global instruction precedes the agent's own, a blank line apart
  (:func:`join_instructions`); an empty one adds nothing.

Providers and templates run where the model request is built — the model step, an activity
on Temporal — never in workflow code: they may read artifacts and call anything.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeAlias

from .asyncutil import maybe_await
from .context import ReadonlyContext
from .errors import ArtifactNotFoundError, InstructionKeyError, InvalidArtifactRequestError
from .state import APP_PREFIX, TEMP_PREFIX, USER_PREFIX

if TYPE_CHECKING:
    from google.genai import types

__all__ = [
    "Instruction",
    "InstructionProvider",
    "inject_session_state",
    "instruction_text",
    "join_instructions",
]

InstructionProvider: TypeAlias = Callable[[ReadonlyContext], str | Awaitable[str]]
"""A function (sync or async) of the read-only context returning an instruction's text."""

Instruction: TypeAlias = str | InstructionProvider
"""A system instruction: a template string, or a provider whose text is not templated."""

_PLACEHOLDER = re.compile(r"{+[^{}]*}+")
_ARTIFACT = "artifact."
_PREFIXES = (APP_PREFIX, USER_PREFIX, TEMP_PREFIX)


async def inject_session_state(template: str, readonly_context: ReadonlyContext) -> str:
    """Fill ``template``'s placeholders from the session's state and artifacts (ADK's helper).

    For an instruction provider that wants the template rules of a string instruction, as
    ADK-Go's ``instructionutil.InjectSessionState`` and ADK-Python's
    ``instructions_utils.inject_session_state``.

    Args:
        template: The text with ``{key}``, ``{key?}``, ``{artifact.name}`` placeholders.
        readonly_context: The context whose session the values come from.

    Returns:
        The text with every placeholder replaced, or left as written when it is not a name.

    Raises:
        InstructionKeyError: A placeholder that is not optional names a missing state key or
            artifact, or an artifact placeholder meets a runtime without artifact service.
    """
    where = f"an instruction of agent {readonly_context.agent_name!r}"
    return await _render(template, readonly_context, where)


async def instruction_text(
    instruction: Instruction, ctx: ReadonlyContext, *, where: str | None = None
) -> str:
    """The text ``instruction`` stands for in ``ctx``: a provider's result as it is, a template
    filled in.

    Args:
        instruction: A template string or a provider.
        ctx: The context of the model request being built.
        where: Names the instruction in error messages (``"the instruction of agent 'x'"``).

    Returns:
        The text; ``""`` for an empty template.

    Raises:
        InstructionKeyError: The template names a missing state key or artifact.
        TypeError: A provider returned something other than a string.
    """
    if callable(instruction):
        text = await maybe_await(instruction(ctx))
        if not isinstance(text, str):
            raise TypeError(
                f"instruction provider {getattr(instruction, '__name__', instruction)!r} of "
                f"agent {ctx.agent_name!r} returned {type(text).__name__}, not str"
            )
        return text
    if not instruction:
        return ""
    return await _render(instruction, ctx, where or f"the instruction of agent {ctx.agent_name!r}")


def join_instructions(*texts: str) -> str:
    """Instructions as ADK appends them to a request: the non-empty ones, a blank line apart."""
    return "\n\n".join(t for t in texts if t)


async def _render(template: str, ctx: ReadonlyContext, where: str) -> str:
    """``template`` with each brace group replaced by :func:`_replacement`."""
    pieces: list[str] = []
    last = 0
    for match in _PLACEHOLDER.finditer(template):
        pieces.append(template[last : match.start()])
        pieces.append(await _replacement(match.group(), ctx, where))
        last = match.end()
    pieces.append(template[last:])
    return "".join(pieces)


async def _replacement(group: str, ctx: ReadonlyContext, where: str) -> str:
    """What one brace group stands for (the group itself when it names nothing)."""
    name = group.strip("{}").strip()
    optional = name.endswith("?")
    if optional:
        name = name.removesuffix("?")
    if name.startswith(_ARTIFACT):
        return await _artifact_text(name, ctx, where, optional=optional)
    if "." in name:
        return _nested_text(group, name, ctx, optional=optional)
    if not _is_state_name(name):
        return group
    if name not in ctx.state:
        if optional:
            return ""
        raise InstructionKeyError(
            f"{where} names state key {name!r}, which session {ctx.session_id!r} does not "
            f"hold; set it before the agent runs, or write {{{name}?}} to make it optional",
            key=name,
            agent=ctx.agent_name,
        )
    value = ctx.state[name]
    return "" if value is None else str(value)


async def _artifact_text(name: str, ctx: ReadonlyContext, where: str, *, optional: bool) -> str:
    """The text of the artifact a ``{artifact.NAME}`` group names."""
    file_name = name.removeprefix(_ARTIFACT)
    # ADK reads artifacts through the invocation behind the read-only context (ADK-Go
    # unwraps it the same way); the public context offers no artifact reads.
    invocation = ctx._invocation_context
    service = invocation.artifact_service
    if service is None:
        # Even when optional, as ADK-Go: a misconfigured runtime must not pass silently.
        raise InstructionKeyError(
            f"{where} names artifact {file_name!r}, but the runtime has no artifact "
            "service; pass artifact_service= to the runtime",
            key=name,
            agent=ctx.agent_name,
        )
    # Imported here: the artifacts package loads every backend (GCS client included), which
    # an instruction without artifact placeholders never needs.
    from .artifacts.facade import ArtifactsFacade

    facade = ArtifactsFacade(service, invocation.session.key, actions=None, idempotency_key=None)
    try:
        part: types.Part = await facade.load(file_name)
    except (ArtifactNotFoundError, InvalidArtifactRequestError) as err:
        # Only "not there" is optional; a backend that is down stays an error, retried.
        if optional:
            return ""
        raise InstructionKeyError(
            f"{where} names artifact {file_name!r}, which session {ctx.session_id!r} cannot "
            f"load ({err}); save it before the agent runs, or write {{{name}?}} to make it "
            "optional",
            key=name,
            agent=ctx.agent_name,
        ) from None
    return part.text or ""


def _nested_text(group: str, path: str, ctx: ReadonlyContext, *, optional: bool) -> str:
    """What a ``{key.field?.sub}`` group stands for: the nested value, ``""`` when a marked
    (or wholly optional) path does not resolve, else the group as written."""
    segments = path.split(".")
    optional = optional or any(s.endswith("?") for s in segments)
    names = [s.removesuffix("?") for s in segments]
    if not _is_state_name(names[0]) or not all(n.isidentifier() for n in names[1:]):
        return group
    missing = object()
    value: object = ctx.state.get(names[0], missing)
    for name in names[1:]:
        value = value.get(name, missing) if isinstance(value, dict) else missing
    if value is missing:
        return "" if optional else group
    return "" if value is None else str(value)


def _is_state_name(name: str) -> bool:
    """An identifier, or one after a scope prefix (``app:``, ``user:``, ``temp:``)."""
    prefix, colon, rest = name.partition(":")
    if not colon:
        return name.isidentifier()
    return prefix + colon in _PREFIXES and rest.isidentifier()
