"""Tools from plain Python functions: declaration, validation and invocation from one model.

A :class:`FunctionTool` builds a pydantic model from the function's signature once and uses
it twice: its JSON schema is the ``parameters_json_schema`` the model sees, and its
validation checks the arguments the model sends back. The schema and the check therefore
never disagree.

The parameter that receives the :class:`~adk_temporal.context.ToolContext` is left out of
both: it is the one annotated with a class named ``ToolContext`` (a string annotation
counts) or named ``tool_context`` or ``ctx``. A tool has at most one.
"""

from __future__ import annotations

import abc
import asyncio
import copy
import inspect
import re
import types as pytypes
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any, Literal, Protocol, TypeAlias, overload

import pydantic
import pydantic_core
from google.genai import types
from pydantic.json_schema import GenerateJsonSchema

from adk_temporal.approvals import ApprovalPolicy
from adk_temporal.errors import InvalidToolArgumentsError

__all__ = [
    "LONG_RUNNING_NOTE",
    "BaseToolset",
    "ConfirmationPredicate",
    "EffectReceipt",
    "Effects",
    "FunctionTool",
    "LongRunningFunctionTool",
    "OnFailure",
    "Precheck",
    "RetryPolicyLike",
    "as_tool",
    "tool",
]

ConfirmationPredicate = Callable[[dict[str, Any]], bool]
"""Decides from a call's arguments (as the model sent them) whether it needs approval."""

LONG_RUNNING_NOTE = (
    "NOTE: this is a long-running operation. Once it has returned a pending or intermediate "
    "status, do not call it again for the same request."
)
"""What a long-running tool's declaration adds to its description (as ADK-Go's does)."""

OnFailure: TypeAlias = Literal["tell_model", "fail_invocation"]
"""What a call that failed on every attempt does: the model sees the error, or the run fails."""

Precheck: TypeAlias = Callable[[dict[str, Any], Any], "str | Awaitable[str | None] | None"]
"""Run just before a tool's side effect with the call's arguments (as its parameters read
them) and its ``ToolContext``: a reason (text) refuses the call, ``None`` lets it run. May
be async."""


def _policy(approval: ApprovalPolicy | None, **shorthand: Any) -> ApprovalPolicy | None:
    """The policy ``approval`` names, with the shorthand arguments given (not ``None``)
    replacing its fields; ``None`` when neither says anything."""
    given = {k: v for k, v in shorthand.items() if v is not None}
    if not given:
        return approval
    base = approval.model_dump() if approval is not None else {}
    return ApprovalPolicy(**{**base, **given})


Effects: TypeAlias = Literal["idempotent", "external"]
"""What running a tool's call twice does. ``idempotent``: nothing the tool (or its provider,
given ``ctx.idempotency_key``) cannot absorb, so a step is retried as Temporal retries it.
``external``: an effect no one can deduplicate; a call whose worker was lost (or whose code
raised) is never run again by itself but parked *in doubt* for an operator to resolve."""


class EffectReceipt(pydantic.BaseModel):
    """What the session store knows of one call of a tool with external effects.

    Written before the tool's code runs, keyed by the call's idempotency key; closed when
    the code returns or raises. ``attempt_id`` tells one attempt's receipt from another's;
    ``authorized_by`` names the operator's resolution that let a retry run (``None``: the
    first run).
    """

    call_key: str
    tool: str
    attempt_id: str
    started_at: float
    worker: str = ""
    attempt: int = 1
    authorized_by: str | None = None
    details: dict[str, Any] = pydantic.Field(default_factory=dict)
    """What the tool noted while it ran (``ctx.note_effect``), e.g. a provider's id."""
    ended: Literal["returned", "waiting", "raised"] | None = None
    """How the tool's code ended (``waiting``: it returned asking for a confirmation or an
    input, so its answer dispatches the call anew); ``None``: it did not (the worker was
    lost, or it runs)."""
    error: str = ""
    """The exception a tool that raised ended with."""


class RetryPolicyLike(Protocol):
    """What a tool's retry policy provides: ``temporalio.common.RetryPolicy`` fits it.

    A protocol rather than Temporal's class, so this module never imports temporalio.
    """

    @property
    def initial_interval(self) -> timedelta:
        """The first back-off."""
        ...

    @property
    def backoff_coefficient(self) -> float:
        """How much each back-off grows."""
        ...

    @property
    def maximum_interval(self) -> timedelta | None:
        """The longest back-off; ``None`` is 100 × the first."""
        ...

    @property
    def maximum_attempts(self) -> int:
        """The most attempts; ``0`` is unlimited."""
        ...

    @property
    def non_retryable_error_types(self) -> Sequence[str] | None:
        """Error type names never retried."""
        ...


_CONTEXT_CLASS_NAME = "ToolContext"
_CONTEXT_PARAM_NAMES = frozenset({"tool_context", "ctx"})
# The function-name rule of the Gemini API: a letter or underscore, then up to 63 of
# letters, digits, underscores, dots, colons and dashes.
_TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")
_ARGS_SECTION = re.compile(r"(Args|Arguments|Parameters):")
_ARG_ENTRY = re.compile(r"\*{0,2}(?P<name>\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)")


class _NoFieldTitles(GenerateJsonSchema):
    # Pydantic titles every property with its own name; the model gains nothing from them
    # and they cost tokens on every call.
    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


class FunctionTool:
    """A tool backed by a sync or async Python function.

    Sync functions run in a worker thread (``asyncio.to_thread``) so a blocking tool cannot
    stall the event loop the worker's other activities share. The options are kept as
    attributes of the same names; ``context_param`` names the parameter that receives the
    context (``None`` when the function takes none).

    Args:
        func: The function. Its parameters become the tool's (the context parameter
            excepted); it may not take ``*args``, ``**kwargs`` or positional-only parameters.
        name: The tool name; the function's name when ``None``.
        description: The description; the docstring's first paragraph when ``None``.
        require_confirmation: ``True`` to require approval of every call, or a predicate
            over the call's arguments deciding per call.
        start_to_close_timeout: The tool activity's start-to-close timeout (the runtime's
            default when ``None``).
        retry_policy: A ``temporalio.common.RetryPolicy`` for the tool activity (any
            :class:`RetryPolicyLike`). Without one a failing call runs 3 times, 1 s after
            the first failure, doubling, at most 30 s apart. Raise
            :class:`~adk_temporal.errors.ToolError` for a failure no retry can fix.
        heartbeat_timeout: The tool activity's heartbeat timeout, for tools that heartbeat.
        on_failure: Once every attempt failed: ``"tell_model"`` gives the model
            ``{"error": ...}`` and the invocation goes on; ``"fail_invocation"`` fails it.
        long_running: ADK's long-running tool: the function returns at once (a ticket, a
            pending status) and the real result comes later as a function response for
            the call's id, from any system; see :class:`LongRunningFunctionTool`.
        editable: An approver may answer a confirmation of its calls with edited arguments
            (checked against its parameter schema); the call then runs with them. Other
            tools refuse edits (``EditNotAllowedError``).
        approval: The approval policy of its calls
            (:class:`~adk_temporal.approvals.ApprovalPolicy`); a tool with one requires
            confirmation (of every call, unless ``require_confirmation`` is a predicate).
        approvals: Shorthand for the policy's ``approvals`` (distinct approvers needed).
        approvers: Shorthand for its ``approvers`` (principals or groups).
        requester_may_approve: Shorthand for its ``requester_may_approve``.
        reject_ends: Shorthand for its ``reject_ends``.
        max_age: Shorthand for its ``max_age``.
        precheck: Run just before the side effect (:data:`Precheck`): a reason it returns
            refuses the call (the model sees ``{"error": ...}``).
        effects: ``"external"`` for a tool whose effect nothing can deduplicate: a receipt
            is written before its code runs, and a call whose worker was lost (or whose
            code raised) is parked in doubt for an operator, never run again by itself
            (see :data:`Effects`).
        compensate: The tool (or function) that undoes a call's effect, run when an
            operator resolves a call in doubt with ``compensate``; it takes the call's
            arguments (and may take the context, whose ``effect_receipt`` is the call's).

    Raises:
        ValueError: The name is not a valid function name for the model API, or
            ``compensate`` is given for a tool without external effects.
        TypeError: The function's parameters cannot be declared to a model.
        InvalidPolicyError: The approval arguments do not make a policy.
    """

    is_long_running: bool = False
    """ADK's flag: the call's real result comes later, as a function response."""
    editable: bool = False
    """Approvers may answer its confirmations with edited arguments."""
    approval: ApprovalPolicy | None = None
    """The approval policy of its calls (``None``: one answer by anyone decides)."""
    precheck: Precheck | None = None
    """Checks a call just before its side effect (``None``: none)."""
    effects: Effects = "idempotent"
    """What running a call twice does (see :data:`Effects`)."""
    compensator: FunctionTool | None = None
    """The tool an operator's ``compensate`` resolution runs."""

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        require_confirmation: bool | ConfirmationPredicate = False,
        start_to_close_timeout: timedelta | None = None,
        retry_policy: RetryPolicyLike | None = None,
        heartbeat_timeout: timedelta | None = None,
        on_failure: OnFailure = "tell_model",
        long_running: bool = False,
        editable: bool = False,
        approval: ApprovalPolicy | None = None,
        approvals: int | None = None,
        approvers: Sequence[str] | None = None,
        requester_may_approve: bool | None = None,
        reject_ends: bool | None = None,
        max_age: timedelta | None = None,
        precheck: Precheck | None = None,
        effects: Effects = "idempotent",
        compensate: Callable[..., Any] | FunctionTool | None = None,
    ) -> None:
        self.func = func
        self.editable = editable
        self.precheck = precheck
        self.approval = _policy(
            approval,
            approvals=approvals,
            approvers=approvers,
            requester_may_approve=requester_may_approve,
            reject_ends=reject_ends,
            max_age=max_age,
        )
        self.effects = effects
        self.is_long_running = long_running
        self.name = name if name is not None else getattr(func, "__name__", "")
        if not _TOOL_NAME.fullmatch(self.name):
            raise ValueError(
                f"invalid tool name {self.name!r}: use a letter or underscore followed by at "
                "most 63 letters, digits, '_', '.', ':' or '-' (pass name=...)"
            )
        if compensate is not None and effects != "external":
            raise ValueError(f"tool {self.name!r}: compensate= needs effects='external'")
        self.compensator = as_tool(compensate) if compensate is not None else None
        doc = inspect.getdoc(func) or ""
        self.description = description if description is not None else _summary(doc)
        self.require_confirmation = require_confirmation
        self.start_to_close_timeout = start_to_close_timeout
        self.retry_policy = retry_policy
        self.heartbeat_timeout = heartbeat_timeout
        self.on_failure: OnFailure = on_failure
        self.context_param, self._args_model = _signature_model(func, self.name, doc)
        self._schema: dict[str, Any] | None = None
        self._is_async = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
            getattr(func, "__call__", None)  # noqa: B004 - an object with an async __call__
        )

    def __repr__(self) -> str:
        return f"FunctionTool({self.name!r})"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the wrapped function directly, as if it had not been decorated."""
        return self.func(*args, **kwargs)

    def parameters_schema(self) -> dict[str, Any] | None:
        """The JSON schema of the parameters, or ``None`` when the tool takes none."""
        if not self._args_model.model_fields:
            return None
        if self._schema is None:
            # Built once per tool: pydantic's schema generation cost more than the rest of
            # a model step's request. Each caller gets its own copy, since callbacks may
            # edit the request's declarations.
            self._schema = self._args_model.model_json_schema(schema_generator=_NoFieldTitles)
        return copy.deepcopy(self._schema)

    def declaration(self) -> types.FunctionDeclaration:
        """The function declaration the model is given for this tool."""
        description = self.description
        if self.is_long_running:
            description = (
                f"{description}\n\n{LONG_RUNNING_NOTE}" if description else LONG_RUNNING_NOTE
            )
        return types.FunctionDeclaration(
            name=self.name,
            description=description or None,
            parameters_json_schema=self.parameters_schema(),
        )

    def validate_args(self, args: Mapping[str, Any] | None) -> dict[str, Any]:
        """Check the model's arguments against the declared parameters.

        Args:
            args: The call's arguments as the model sent them (``None`` means none).

        Returns:
            The keyword arguments for the function: coerced, defaults filled in, nested
            models and enums as Python objects; the context parameter is not included.

        Raises:
            InvalidToolArgumentsError: An argument is missing, unexpected or of the wrong
                type; the message names each offending field and the problem.
        """
        try:
            parsed = self._args_model.model_validate(dict(args or {}))
        except pydantic.ValidationError as exc:
            problems = [
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                for err in exc.errors(include_url=False)
            ]
            raise InvalidToolArgumentsError(self.name, problems) from None
        return {field: getattr(parsed, field) for field in self._args_model.model_fields}

    def requires_confirmation(self, args: Mapping[str, Any] | None) -> bool:
        """Whether a call with ``args`` must be approved before it runs.

        Args:
            args: The call's arguments as the model sent them.

        Returns:
            ``require_confirmation`` itself when it is a bool (``True`` too for a tool with
            an approval policy), else the predicate's answer.
        """
        if isinstance(self.require_confirmation, bool):
            return self.require_confirmation or self.approval is not None
        return bool(self.require_confirmation(dict(args or {})))

    async def run(self, args: Mapping[str, Any] | None, ctx: Any) -> dict[str, Any]:
        """Validate ``args``, call the function with ``ctx`` injected, and shape its result.

        Args:
            args: The call's arguments as the model sent them.
            ctx: The ``ToolContext`` passed to the context parameter, if the function has one.

        Returns:
            The function's result as a JSON-able dict: a dict as returned (its values made
            JSON-able), a pydantic model dumped, anything else as ``{"result": value}``.

        Raises:
            InvalidToolArgumentsError: The arguments do not match the parameters; the
                function was not called.
            Exception: Whatever the function raised, unchanged.
        """
        result = await self.call(args, ctx)
        jsonable = pydantic_core.to_jsonable_python(result, bytes_mode="base64")
        return jsonable if isinstance(jsonable, dict) else {"result": jsonable}

    async def call(self, args: Mapping[str, Any] | None, ctx: Any) -> Any:
        """Validate ``args`` and call the function with ``ctx`` injected; its result as it
        returned it (a tool node's output, ADK 2's ``_ToolNode``).

        Raises:
            InvalidToolArgumentsError: The arguments do not match the parameters; the
                function was not called.
            Exception: Whatever the function raised, unchanged.
        """
        kwargs = self.validate_args(args)
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        if self._is_async:
            result = await self.func(**kwargs)
        else:
            result = await _finish_thread(
                asyncio.ensure_future(asyncio.to_thread(self.func, **kwargs))
            )
            # A sync callable may still hand back an awaitable (a partial of an async
            # function, a lambda returning a coroutine); it must run on the loop.
            if inspect.isawaitable(result):
                result = await result
        return result


async def _finish_thread(work: asyncio.Future[Any]) -> Any:
    """The result of a sync tool's thread, also when the step is cancelled meanwhile.

    A thread cannot be interrupted: its side effects happen whatever the step does, so a
    cancelled step still waits for it and returns what it returned — the invocation then
    records the outcome (a charge made) instead of losing it.
    """
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        if work.cancelled():
            raise
        result = await work
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
        return result


@overload
def tool(func: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    require_confirmation: bool | ConfirmationPredicate = False,
    start_to_close_timeout: timedelta | None = None,
    retry_policy: RetryPolicyLike | None = None,
    heartbeat_timeout: timedelta | None = None,
    on_failure: OnFailure = "tell_model",
    long_running: bool = False,
    editable: bool = False,
    approval: ApprovalPolicy | None = None,
    approvals: int | None = None,
    approvers: Sequence[str] | None = None,
    requester_may_approve: bool | None = None,
    reject_ends: bool | None = None,
    max_age: timedelta | None = None,
    precheck: Precheck | None = None,
    effects: Effects = "idempotent",
    compensate: Callable[..., Any] | FunctionTool | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    require_confirmation: bool | ConfirmationPredicate = False,
    start_to_close_timeout: timedelta | None = None,
    retry_policy: RetryPolicyLike | None = None,
    heartbeat_timeout: timedelta | None = None,
    on_failure: OnFailure = "tell_model",
    long_running: bool = False,
    editable: bool = False,
    approval: ApprovalPolicy | None = None,
    approvals: int | None = None,
    approvers: Sequence[str] | None = None,
    requester_may_approve: bool | None = None,
    reject_ends: bool | None = None,
    max_age: timedelta | None = None,
    precheck: Precheck | None = None,
    effects: Effects = "idempotent",
    compensate: Callable[..., Any] | FunctionTool | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a :class:`FunctionTool`; usable as ``@tool`` or ``@tool(...)``.

    Args:
        func: The function, when used as a bare decorator.
        name: The tool name; the function's name when ``None``.
        description: The description; the docstring's first paragraph when ``None``.
        require_confirmation: ``True``, or a predicate over the call's arguments.
        start_to_close_timeout: The tool activity's start-to-close timeout.
        retry_policy: A ``temporalio.common.RetryPolicy`` for the tool activity.
        heartbeat_timeout: The tool activity's heartbeat timeout.
        on_failure: What a call that failed on every attempt does (see :class:`FunctionTool`).
        long_running: Make it a long-running tool (see :class:`LongRunningFunctionTool`).
        editable: Approvers may edit its calls' arguments (see :class:`FunctionTool`).
        approval: The approval policy of its calls (see :class:`FunctionTool`).
        approvals: Shorthand for the policy's ``approvals``.
        approvers: Shorthand for the policy's ``approvers``.
        requester_may_approve: Shorthand for the policy's ``requester_may_approve``.
        reject_ends: Shorthand for the policy's ``reject_ends``.
        max_age: Shorthand for the policy's ``max_age``.
        precheck: Checks a call just before its side effect (see :class:`FunctionTool`).
        effects: ``"external"``: calls in doubt are resolved by an operator, never run again
            by themselves (see :class:`FunctionTool`).
        compensate: What undoes a call's effect (see :class:`FunctionTool`).

    Returns:
        The tool, or a decorator that makes it.
    """

    def make(f: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(
            f,
            name=name,
            description=description,
            require_confirmation=require_confirmation,
            start_to_close_timeout=start_to_close_timeout,
            retry_policy=retry_policy,
            heartbeat_timeout=heartbeat_timeout,
            on_failure=on_failure,
            long_running=long_running,
            editable=editable,
            approval=approval,
            approvals=approvals,
            approvers=approvers,
            requester_may_approve=requester_may_approve,
            reject_ends=reject_ends,
            max_age=max_age,
            precheck=precheck,
            effects=effects,
            compensate=compensate,
        )

    return make if func is None else make(func)


class LongRunningFunctionTool(FunctionTool):
    """ADK's long-running tool: it starts work elsewhere and returns at once.

    The function returns an intermediate result (a ticket id, ``{"status": "pending"}``);
    the call's id is in the model event's ``long_running_tool_ids`` and the model is told
    not to call the tool again. When the agent's turn ends, the invocation waits — for
    days if need be — for the call's function response: an input request whose id is the
    function-call id, answered like any other (``resume``, signal, checked update, CLI,
    HTTP gateway) with the response, a JSON object. The answer is stored as the user's
    function response and the agent goes on with ADK's content rearrangement.

    Takes the same arguments as :class:`FunctionTool` (``long_running`` is set).
    """

    def __init__(self, func: Callable[..., Any], **options: Any) -> None:
        super().__init__(func, **{**options, "long_running": True})


class BaseToolset(abc.ABC):
    """Tools an agent lists at run time, on the worker (an MCP server's, say).

    An agent takes toolsets in ``tools=[...]`` next to functions. The activities ask for the
    tools on every step (a toolset caches as it sees fit); workflow code never does, so a
    listing is only ever an activity's input to the model, recorded in history with its
    reply.
    """

    name: str
    """Names the toolset in messages and in the agent's description."""

    @abc.abstractmethod
    async def get_tools(self) -> list[FunctionTool]:
        """The tools offered now.

        Raises:
            AdkError: The tools cannot be listed; the step fails with it.
        """

    async def close(self) -> None:
        """Release what the toolset holds (connections); listing again reopens it."""
        return None


def as_tool(obj: FunctionTool | Callable[..., Any]) -> FunctionTool:
    """Return ``obj`` if it is a :class:`FunctionTool`, else wrap the function in one.

    Args:
        obj: A tool or a plain sync or async function.

    Returns:
        The tool.

    Raises:
        TypeError: ``obj`` is neither a tool nor callable.
    """
    if isinstance(obj, FunctionTool):
        return obj
    if not callable(obj):
        raise TypeError(f"cannot make a tool from {obj!r}: expected a function or FunctionTool")
    return FunctionTool(obj)


def _is_context_annotation(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return re.search(rf"\b{_CONTEXT_CLASS_NAME}\b", annotation) is not None
    if isinstance(annotation, type):
        return annotation.__name__ == _CONTEXT_CLASS_NAME
    # ToolContext | None, Optional[ToolContext], Annotated[ToolContext, ...]
    return any(_is_context_annotation(arg) for arg in typing.get_args(annotation))


def _signature_model(
    func: Callable[..., Any], tool_name: str, doc: str
) -> tuple[str | None, type[pydantic.BaseModel]]:
    signature = inspect.signature(func)
    context_param: str | None = None
    params: list[inspect.Parameter] = []
    for param in signature.parameters.values():
        if param.kind in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
            inspect.Parameter.POSITIONAL_ONLY,
        ):
            raise TypeError(
                f"tool {tool_name}: parameter {param.name!r} is {param.kind.description}; "
                "a tool's parameters must be passable by keyword"
            )
        annotated = param.annotation is not inspect.Parameter.empty
        if param.name in _CONTEXT_PARAM_NAMES or (
            annotated and _is_context_annotation(param.annotation)
        ):
            if context_param is not None:
                raise TypeError(
                    f"tool {tool_name}: parameters {context_param!r} and {param.name!r} both "
                    "take the ToolContext; keep one"
                )
            context_param = param.name
        else:
            params.append(param)
    hints = _resolve_annotations(func, params)
    descriptions = _arg_descriptions(doc)
    fields: dict[str, Any] = {}
    for param in params:
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (
            hints.get(param.name, Any),
            pydantic.Field(default, description=descriptions.get(param.name)),
        )
    model = pydantic.create_model(
        f"{tool_name}_args",
        __config__=pydantic.ConfigDict(extra="forbid"),
        **fields,
    )
    return context_param, model


def _resolve_annotations(
    func: Callable[..., Any], params: list[inspect.Parameter]
) -> dict[str, Any]:
    # Resolve only the tool's own parameters: the context parameter's annotation is often
    # imported under TYPE_CHECKING only, and resolving it would raise NameError.
    target = inspect.unwrap(func)
    if not inspect.isfunction(target) and not inspect.ismethod(target):
        target = getattr(target, "__call__", target)  # noqa: B004 - a callable object
    shim = pytypes.SimpleNamespace(
        __annotations__={
            p.name: p.annotation for p in params if p.annotation is not inspect.Parameter.empty
        },
        __globals__=getattr(target, "__globals__", {}),
    )
    try:
        return typing.get_type_hints(shim, include_extras=True)
    except NameError as exc:
        raise TypeError(f"cannot resolve the annotations of tool {func!r}: {exc}") from exc


def _summary(doc: str) -> str:
    paragraph = doc.strip().split("\n\n", 1)[0]
    return " ".join(line.strip() for line in paragraph.splitlines())


def _arg_descriptions(doc: str) -> dict[str, str]:
    descriptions: dict[str, str] = {}
    section_indent: int | None = None
    entry_indent: int | None = None
    current: str | None = None
    for line in doc.splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if section_indent is None:
            if _ARGS_SECTION.fullmatch(stripped):
                section_indent = indent
            continue
        if not stripped:
            continue
        if indent <= section_indent:
            break
        entry = _ARG_ENTRY.fullmatch(stripped)
        if entry is not None and (entry_indent is None or indent <= entry_indent):
            entry_indent = indent
            current = entry["name"]
            descriptions[current] = entry["text"].strip()
        elif current is not None:
            descriptions[current] = f"{descriptions[current]} {stripped}".strip()
    return descriptions
