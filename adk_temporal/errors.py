"""The exception tree of adk-temporal.

Every error the library raises on purpose derives from :class:`AdkError`. Two families:

* **Request errors** (:class:`AdkRequestError`): the caller asked for something invalid —
  a malformed artifact request, an unknown agent or model, a confirmation id that names
  nothing, a resume input that violates its schema. Retrying the same call cannot help, so
  the Temporal layer turns these into non-retryable ``ApplicationError`` values whose
  ``type`` is the class name.
* **Run errors** (:class:`AdkRunError`): the request was fine but the run could not
  complete it — a version race lost on every attempt, a backend or capability that is not
  there. Some are retryable (:class:`VersionConflictError`).

Two classes also derive from builtin errors so plain Python code can catch them:
``InvalidArtifactRequestError`` is a ``ValueError`` and ``ArtifactNotFoundError`` is a
``FileNotFoundError`` (the analogue of Go's ``fs.ErrNotExist``).

```
AdkError
├── AdkRequestError
│   ├── InvalidIdError (ValueError: an app, user or session id breaks the id grammar)
│   ├── InvalidArtifactRequestError (ValueError)
│   ├── InvalidResumeInputError (ValueError)
│   ├── InvalidSessionRequestError (ValueError)
│   ├── InvalidToolArgumentsError (ValueError)
│   ├── UnknownRequestIdError (KeyError)
│   │   └── AnswerPendingError (another answer is held by Temporal; client.py)
│   ├── ConfirmationMismatchError
│   ├── EditNotAllowedError (an approval edits the arguments of a tool not declared editable)
│   ├── InvalidEditError (ValueError: edited arguments break the tool's parameter schema)
│   ├── BudgetExceededError (ValueError: a value is larger than its budget)
│   ├── InvalidAnswerError (ValueError: an answer is malformed or over its budget)
│   ├── UnencodableValueError (ValueError: NaN, infinity, or not JSON)
│   ├── SessionNotFoundError (LookupError)
│   ├── SessionExistsError
│   ├── SessionBusyError
│   │   └── QueueFullError (a busy session holds as many queued messages as it takes;
│   │       double_texting/)
│   ├── InvocationClosedError (an invocation asked to stop has already ended)
│   ├── InvalidDoubleTextingError (ValueError: no such double-texting policy; double_texting/)
│   ├── InvalidQueuedMessageError (ValueError: a busy session's run refused a message as
│   │   malformed or over its budget; double_texting/)
│   ├── QueuedMessageNotFoundError (LookupError: no queued message has that invocation id)
│   ├── MessageWithdrawnError (a queued message never ran: withdrawn or superseded)
│   ├── InvalidScheduleError (a schedule's description is malformed; schedules/)
│   ├── ScheduleNotFoundError (LookupError: no schedule of adk-temporal has that id)
│   ├── ScheduleExistsError (a schedule with that id exists)
│   ├── InvocationNotFoundError (LookupError: a session has no such invocation to rewind
│   │   to or fork at; rewind.py)
│   ├── StagedResponseNotFoundError (LookupError: a staged tool response is gone)
│   ├── ModelRequestError (a 4xx from the model API)
│   ├── ModelConfigurationError (ValueError: no model credentials, or the API refused the
│   │   key; names what to set)
│   ├── UnknownAgentError (LookupError)
│   ├── AppNotServedError (LookupError: a run asked of an in-process runner of another app)
│   ├── UnmatchedFunctionResponseError (LookupError: a response answers no call in history)
│   ├── UnknownModelError (LookupError)
│   ├── InstructionKeyError (KeyError: an instruction template names a state key or
│   │   artifact that cannot be read; instructions.py)
│   ├── MissingExtraError (ImportError: an optional extra is not installed; extras.py)
│   ├── EvalSetError (ValueError: an eval set, test file or criteria file is not ADK's
│   │   format, or names a metric not computed here; adk_temporal.evaluation)
│   ├── ModelLimitError (ValueError: a malformed model limit; model_limits.py)
│   ├── WorkerQueueError (ValueError: a worker was given another app's own task queue)
│   ├── WorkflowConfigurationError (ValueError: a graph workflow, node or edge that cannot
│   │   run, as ADK 2 names it; adk_temporal.workflow)
│   │   └── GraphValidationError (the edges break one of ADK's graph rules)
│   ├── UnquotableValueError (ValueError: a value a visibility query cannot hold;
│   │   visibility.py)
│   ├── RemoteAgentConfigError (ValueError: a remote A2A agent's token variable is unset;
│   │   a2a/errors.py)
│   └── EncryptionError (ValueError: encrypted payloads cannot be read or written as
│       │   configured; codec.py: KeyFileError, UnknownKeyError, PayloadAuthenticationError;
│       │   codec_server.py: CodecTokenError; keys: KeyStoreError)
│       └── ForgottenError (the value was sealed with the data key of a session, user or
│           app that was forgotten: it can never be read again)
├── ToolError (a tool's failure for the model to see; never retried)
├── NodeTimeoutError (a graph node ran past its timeout; retried under its RetryConfig)
└── AdkRunError
    ├── ArtifactNotFoundError (FileNotFoundError)
    ├── VersionConflictError
    ├── ModelUnavailableError (429, 5xx, transport; retryable)
    ├── OutputSchemaError (ValueError: a final answer does not match the output_schema)
    ├── UnknownAppError (LookupError: a step reached a worker of another app; retryable)
    ├── MemoryServiceNotConfiguredError
    ├── ArtifactServiceNotConfiguredError
    ├── NotificationUndeliveredError (an endpoint did not take a notice; retryable)
    │   └── NotificationRejectedError (the endpoint refused it for good, a 4xx)
    ├── McpServerError (mcp.py: an MCP server cannot be reached or died mid-call; retryable)
    │   └── McpListingError (mcp.py: a tool listing that cannot be used — a schema that
    │       does not parse, two tools under one model name, a refusal; never retried)
    ├── RemoteAgentUnavailableError (a2a/errors.py: a remote A2A agent or its card cannot
    │   be reached; retryable)
    └── StepFailedError (a model, tool or append step failed for good)
```

An invocation that ends failed for one of the runtime's own reasons, rather than an
exception's, stores an error event whose ``error_code`` is an :class:`InvocationErrorCode`.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "AdkError",
    "AdkRequestError",
    "AdkRunError",
    "AppNotServedError",
    "ArtifactNotFoundError",
    "ArtifactServiceNotConfiguredError",
    "BudgetExceededError",
    "ConfirmationMismatchError",
    "EditNotAllowedError",
    "EncryptionError",
    "ForgottenError",
    "GraphValidationError",
    "InstructionKeyError",
    "InvalidAnswerError",
    "InvalidArtifactRequestError",
    "InvalidEditError",
    "InvalidIdError",
    "InvalidResumeInputError",
    "InvalidSessionRequestError",
    "InvalidToolArgumentsError",
    "InvocationClosedError",
    "InvocationErrorCode",
    "InvocationNotFoundError",
    "MemoryServiceNotConfiguredError",
    "ModelConfigurationError",
    "ModelRequestError",
    "ModelUnavailableError",
    "NodeTimeoutError",
    "NotificationRejectedError",
    "NotificationUndeliveredError",
    "OutputSchemaError",
    "SessionBusyError",
    "SessionExistsError",
    "SessionNotFoundError",
    "StagedResponseNotFoundError",
    "StepFailedError",
    "ToolError",
    "UnencodableValueError",
    "UnknownAgentError",
    "UnknownAppError",
    "UnknownModelError",
    "UnknownRequestIdError",
    "UnmatchedFunctionResponseError",
    "VersionConflictError",
    "WorkerQueueError",
    "WorkflowConfigurationError",
]


class AdkError(Exception):
    """Base class of every error adk-temporal raises on purpose."""


class AdkRequestError(AdkError):
    """The caller asked for something invalid; retrying the same request cannot succeed."""


class AdkRunError(AdkError):
    """A valid request could not be completed by the run or its backends."""

    retryable: bool = True
    """False when another attempt cannot help: the step then fails at once."""

    retry_after: float | None = None
    """Seconds the next attempt must wait at least (a provider's ``Retry-After``);
    ``None``: the retry policy's back-off decides."""


class InvalidIdError(AdkRequestError, ValueError):
    """An app, user or session id breaks the id grammar of :mod:`adk_temporal.ids`."""


class InvalidArtifactRequestError(AdkRequestError, ValueError):
    """An artifact request failed validation; no backend was touched."""


class InvalidResumeInputError(AdkRequestError, ValueError):
    """A resume input does not satisfy the JSON schema of the request it answers.

    Args:
        message: What is wrong, the offending values included.
        violated: The broken rules without the values (``"$.end: required"``), for
            records that must never hold the answer itself.
    """

    def __init__(self, message: str, *, violated: list[str] | None = None) -> None:
        super().__init__(message)
        self.violated = violated or []


class InvalidSessionRequestError(AdkRequestError, ValueError):
    """A session request failed validation (empty id, non-JSON state); nothing was stored."""


class UnknownRequestIdError(AdkRequestError, KeyError):
    """A confirmation or interrupt id names no open request of this invocation."""

    def __str__(self) -> str:
        # KeyError quotes its argument; keep the message readable.
        return str(self.args[0]) if self.args else ""


class ConfirmationMismatchError(AdkRequestError):
    """A confirmation reply does not match the call it claims to approve (digest or conflict)."""


class EditNotAllowedError(AdkRequestError):
    """An answer edits a call's arguments, but its tool was not declared ``editable=True``
    (or the answer rejects the call): the request stays open."""


class InvalidEditError(AdkRequestError, ValueError):
    """An approval's edited arguments do not satisfy the tool's parameter schema; the
    request stays open."""


class BudgetExceededError(AdkRequestError, ValueError):
    """A value is larger than its budget (:class:`~adk_temporal.budgets.Budgets`)."""


class InvalidAnswerError(AdkRequestError, ValueError):
    """An answer to a request is malformed (wrong shape or types) or over its budget."""


class UnencodableValueError(AdkRequestError, ValueError):
    """A value cannot cross a boundary: it holds NaN, an infinity, or a non-JSON object."""


class ToolError(AdkError):
    """Raised by a tool to tell the model its call failed; the call is not retried.

    Any other exception from a tool fails the step, which is retried under the tool's retry
    policy; only after the last attempt does the model see the error.
    """


class SessionNotFoundError(AdkRequestError, LookupError):
    """No session exists with the given app, user and session id."""


class SessionExistsError(AdkRequestError):
    """A session with the given app, user and session id already exists."""


class StagedResponseNotFoundError(AdkRequestError, LookupError):
    """A tool step's staged response is not in the session store (the session was deleted
    or the store replaced while the invocation ran); no retry can bring it back."""


class SessionBusyError(AdkRequestError):
    """An invocation is already running in this session; wait for it or answer its requests."""


class InvocationClosedError(AdkRequestError):
    """An invocation asked to stop (cancelled) is no longer running: completed, failed,
    cancelled or terminated; Temporal would take the request and do nothing with it."""


class InvocationNotFoundError(AdkRequestError, LookupError):
    """A rewind or fork names an invocation the session holds no event of."""


class ModelRequestError(AdkRequestError):
    """The model API refused the request (HTTP 400/401/403/404); retrying cannot help.

    Args:
        status: The HTTP status code the API answered with.
        message: The API's error message.
    """

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"model request failed with HTTP {status}: {message}")
        self.status = status
        self.message = message


class ModelConfigurationError(AdkRequestError, ValueError):
    """The model cannot be called as the worker is configured: no credentials were found,
    or the API refused the ones given (an invalid, expired or unauthorised API key).

    No attempt can succeed until the worker's configuration changes, so the step fails at
    once, naming what to set.

    Args:
        status: The HTTP status the API answered with; ``None`` when no call was made.
        message: What is wrong, and what to set.
    """

    def __init__(self, status: int | None, message: str) -> None:
        where = f" (HTTP {status})" if status is not None else ""
        super().__init__(f"model configuration error{where}: {message}")
        self.status = status
        self.message = message


class WorkerQueueError(AdkRequestError, ValueError):
    """A worker was given a task queue it may not poll: another app's own queue
    (``<queue>/apps/<app>``), whose steps only that app's workers may take, or the queue
    of unnamed apps' workers (``<queue>/any-app``) for a named app."""


class InvalidToolArgumentsError(AdkRequestError, ValueError):
    """The arguments of a tool call do not match the tool's parameters.

    Args:
        tool_name: The tool the arguments were meant for.
        problems: One ``"<field>: <problem>"`` line per violation, in validation order.
    """

    def __init__(self, tool_name: str, problems: list[str]) -> None:
        super().__init__(f"invalid arguments for tool {tool_name}: {'; '.join(problems)}")
        self.tool_name = tool_name
        self.problems = problems


class UnknownAgentError(AdkRequestError, LookupError):
    """No agent with the given name is registered."""


class AppNotServedError(AdkRequestError, LookupError):
    """A run was asked of an in-process runner that serves another, named app."""


class UnknownAppError(AdkRunError, LookupError):
    """A step of one app's invocation reached a worker that serves another app.

    Retryable, after :attr:`retry_after`: the task is the app's own workers' to take, and a
    run is never failed by a worker it was not meant for.
    """

    retry_after: float | None = 2.0


class UnmatchedFunctionResponseError(AdkRequestError, LookupError):
    """The session's latest function response answers a call that is nowhere in history."""


class UnknownModelError(AdkRequestError, LookupError):
    """No model factory in the registry matches the given model name."""


class InstructionKeyError(AdkRequestError, KeyError):
    """An agent's instruction template names a state key or artifact that cannot be read.

    The session's content (or the agent's instruction) is what is wrong, so another attempt
    of the step would find the same: the step fails at once. ``{key?}`` makes a placeholder
    optional.

    Args:
        message: What is missing, where, and how to fix it.
        key: The placeholder as written between the braces, without ``?``
            (``user_name``, ``app:tier``, ``artifact.notes.txt``).
        agent: The agent whose model request was being built.
    """

    def __init__(self, message: str, *, key: str, agent: str) -> None:
        super().__init__(message)
        self.key = key
        self.agent = agent

    def __str__(self) -> str:
        # KeyError quotes its argument; keep the message readable.
        return str(self.args[0]) if self.args else ""


class EncryptionError(AdkRequestError, ValueError):
    """Encrypted payloads cannot be read or written as configured.

    A key file is unusable, a payload names a key the key file lacks or fails
    authentication, a payload is encrypted and the process was given no key, or a codec
    server's token is unusable. The subclasses (:mod:`adk_temporal.codec`,
    :mod:`adk_temporal.codec_server`) say which; the message names the file or key id.
    """


class ForgottenError(EncryptionError):
    """A value was sealed with the data key of a session, user or app that was forgotten.

    The key was deleted on purpose (``adk-temporal forget``, retention), so no key file or
    retry can open the value again: its session's data is gone by design.

    Args:
        message: What could not be read, and when its key was forgotten.
        key_id: The data key the value names.
        scope: The session, user or app the key belonged to (``app/user/session``).
        forgotten_at: When the key was deleted (POSIX seconds).
    """

    def __init__(self, message: str, *, key_id: str, scope: str, forgotten_at: float) -> None:
        super().__init__(message)
        self.key_id = key_id
        self.scope = scope
        self.forgotten_at = forgotten_at


class ArtifactNotFoundError(AdkRunError, FileNotFoundError):
    """The artifact, or the requested version of it, does not exist."""


class VersionConflictError(AdkRunError):
    """A save lost the version race on every attempt, or the requested version exists."""


class ModelUnavailableError(AdkRunError):
    """The model API is rate-limited, failing (5xx) or unreachable; a retry may succeed.

    Args:
        status: The HTTP status code, or ``None`` for a transport error.
        message: What went wrong.
        retry_after: The delay the provider asked for before the next attempt, in seconds
            (a ``Retry-After`` header, Gemini's ``RetryInfo``); ``None`` when it named none.
            The next attempt of the step is not made sooner (up to the worker's maximum).
    """

    def __init__(
        self, status: int | None, message: str, *, retry_after: float | None = None
    ) -> None:
        where = f"HTTP {status}" if status is not None else "transport error"
        asked = f"; the provider asks to retry after {retry_after:g} s" if retry_after else ""
        super().__init__(f"model unavailable ({where}): {message}{asked}")
        self.status = status
        self.message = message
        self.retry_after = retry_after


class OutputSchemaError(AdkRunError, ValueError):
    """An agent's final answer is not JSON of its ``output_schema``; the invocation fails
    with the answer kept in the session.

    Args:
        agent: The agent that answered.
        schema: The name of the schema the answer had to match.
        problems: One ``"<field>: <problem>"`` line per violation.
    """

    def __init__(self, agent: str, schema: str, problems: list[str]) -> None:
        super().__init__(
            f"OutputSchemaError: agent {agent!r} answered output that does not match its "
            f"output_schema {schema}: {'; '.join(problems)}"
        )
        self.agent = agent
        self.schema = schema
        self.problems = problems


class MemoryServiceNotConfiguredError(AdkRunError):
    """``search_memory`` was called but the runtime was given no memory service."""


class ArtifactServiceNotConfiguredError(AdkRunError):
    """An artifact operation was requested but the runtime was given no artifact service."""


class NotificationUndeliveredError(AdkRunError):
    """A notification endpoint did not take a notice (unreachable, 5xx, 408, 429); retried."""


class NotificationRejectedError(NotificationUndeliveredError):
    """A notification endpoint refused a notice for good (a 4xx other than 408 and 429)."""

    retryable = False


class StepFailedError(AdkRunError):
    """A step of the invocation flow failed for good (after its retries); the run fails.

    Args:
        kind: The failure's type name (the ``ApplicationError`` type on Temporal, the
            exception class in-process), e.g. ``ModelRequestError``.
        message: What went wrong.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class InvocationErrorCode(StrEnum):
    """The ``error_code`` of the error event an invocation ends with for the runtime's own
    reasons (an exception's ends it with the exception's class name instead)."""

    STEP_LIMIT_EXCEEDED = "StepLimitExceeded"
    """The invocation made ``max_steps`` model steps without an answer."""
    TOKEN_BUDGET_EXCEEDED = "TokenBudgetExceeded"
    """The invocation's own ``token_budget`` was spent (the step that went over is kept)."""
    TOKEN_BUDGET_REFUSED = "TokenBudgetRefused"
    """A cumulative budget was reached and its request answered ``{"allow": 0}``."""
    CANCELLED = "Cancelled"
    """The invocation was cancelled (Temporal's cancellation, or the runner's)."""
    REMOTE_AGENT_FAILED = "RemoteAgentFailed"
    """A remote agent's task failed, was cancelled or refused the turn."""


class WorkflowConfigurationError(AdkRequestError, ValueError):
    """A graph workflow, node or edge is declared in a way that cannot run (ADK 2's error
    of the same name): the same declaration fails the same way every time."""


class GraphValidationError(WorkflowConfigurationError):
    """The edges do not form a graph ADK accepts (unreachable nodes, duplicate names or
    edges, a cycle without a route...)."""


class NodeTimeoutError(AdkError):
    """A graph node ran longer than its ``timeout`` (ADK 2's error); a node's
    ``RetryConfig`` may retry it.

    Args:
        node_name: The node that ran out of time.
        timeout: Its timeout, in seconds.
    """

    def __init__(self, *, node_name: str, timeout: float) -> None:
        self.node_name = node_name
        self.timeout = timeout
        super().__init__(f"Node '{node_name}' timed out after {timeout} seconds.")
