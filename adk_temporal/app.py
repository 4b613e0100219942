"""``App``: the one configuration of what a worker (or the in-process runner) serves.

An :class:`App` holds every setting of the agents' runtime; :class:`Stores` holds where
sessions and artifacts live. ``AdkPlugin(app, stores=...)``, ``Runner(app, stores=...)`` and
``StepServices.build(app, stores)`` take both whole, so no setting is re-spelled (and none
dropped) on the way. The CLI loads an app with ``--app module:attr``; the attribute may be an
:class:`App`, one ``Agent``, a list of agents, or a zero-argument function returning any of
these.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from .agents import BaseAgent
from .approvals import ApprovalPolicy
from .artifacts import ArtifactService
from .compaction import EventsCompactionConfig
from .dispatch import LocalSteps
from .double_texting import DoubleTexting
from .errors import AdkRequestError
from .events import EventCallback
from .memory import MemoryService
from .model_limits import ModelLimit
from .models import ModelRegistry, default_registry
from .notifications import Notifications
from .sessions import SessionService
from .usage import TokenBudgets

__all__ = ["App", "AppLoadError", "Stores", "load_app"]


class AppLoadError(AdkRequestError):
    """``--app module:attr`` does not name an importable app."""


@dataclass(frozen=True)
class App:
    """The agents a worker serves and every setting of their runtime, storage aside.

    Every setting applies on Temporal and in-process (``Runner``, ``run --local``,
    ``chat --in-process``) alike, except two that need Temporal: ``notifications`` (posted
    by a durable child workflow) and ``model_limits`` (enforced by Temporal's task queues
    across workers); in-process they are ignored.

    Args:
        agents: The agents, looked up by name when an invocation starts.
        name: The app name invocations of these agents are started with (``run --app``).
            A worker serving a named app also polls the app's own task queue
            (``ids.app_task_queue``), where its runs' steps go, so workers of several apps
            may share a task queue; it sends another app's steps back untouched, and
            advertises the name so ``run`` can refuse to start what no worker serves.
        models: Resolves the agents' model names; Gemini plus the scripted models by default.
        memory_service: Backs ``ctx.search_memory``; ``None`` makes it raise.
        request_timeout: How long a confirmation or input request waits when its tool set no
            ``timeout``; ``None`` waits for ever.
        notifications: Signed webhooks posted when an invocation pauses for a human (and,
            if asked, when it completes or fails), retried durably; ``None`` sends none.
            Only invocations run on Temporal notify, not the in-process ``Runner``.
        model_limits: Requests per second and concurrency of model calls, shared by every
            worker (:class:`~adk_temporal.model_limits.ModelLimit`); Temporal only.
        max_retry_after: The longest wait before a model step's next attempt that a
            provider's ``Retry-After`` may impose.
        token_budgets: Cumulative token budgets per session, user and app; a step that
            would start over one pauses the invocation to ask for more.
        events_compaction_config: When the app's sessions are compacted, summarising older
            events for the model (``None``: never; see ``docs/guides/compaction.md``).
        on_event: Callbacks every event a step stores passes first, in order — ADK's
            ``on_event_callback``; each may return a replacement (a redacted copy), or
            ``None`` to keep it. A compaction's summary reaches them as its event's content
            (:mod:`adk_temporal.steps.event_callbacks`).
        retention: How long the app keeps a session nobody touches: the retention schedule
            (``adk-temporal retention schedule``) forgets sessions idle longer, runs closed
            (``None``: kept for ever; see ``docs/guides/encryption.md``). Temporal only.
        double_texting: What a message sent to a session whose invocation is busy does
            when its sender names no policy: ``reject`` (``SessionBusyError``), ``enqueue``,
            ``interrupt`` or ``rollback`` (see ``docs/guides/double-texting.md``). The run
            learns it from its first model step; Temporal only (in-process, a busy session
            refuses).
        approval_policies: Approval policies by tool name, replacing the tools' own
            (``approval=`` on the tool): who approves its calls, how many, for how long,
            reminders and reassignment (see ``docs/guides/approvals.md``). A tool named
            here requires confirmation of every call.
        local_steps: Which short steps run as Temporal local activities on the worker that
            runs the run's workflow task, a chain of them in one task
            (:class:`~adk_temporal.dispatch.LocalSteps`, which says what that changes);
            ``None``: every step is an activity dispatched through the server. The run
            learns it from its first model step; Temporal only.
    """

    agents: Sequence[BaseAgent]
    name: str | None = None
    models: ModelRegistry = field(default_factory=default_registry)
    memory_service: MemoryService | None = None
    request_timeout: timedelta | None = None
    notifications: Notifications | None = None
    model_limits: Sequence[ModelLimit] = ()
    max_retry_after: timedelta = timedelta(minutes=5)
    token_budgets: TokenBudgets = field(default_factory=TokenBudgets)
    events_compaction_config: EventsCompactionConfig | None = None
    on_event: Sequence[EventCallback] = ()
    retention: timedelta | None = None
    double_texting: DoubleTexting = "reject"
    approval_policies: Mapping[str, ApprovalPolicy] = field(default_factory=dict)
    local_steps: LocalSteps | None = None


@dataclass(frozen=True)
class Stores:
    """Where an app's sessions and artifacts live; every worker of a deployment shares them.

    Args:
        sessions: The session store (``SqliteSessionService`` is the embedded default).
        artifacts: The artifact store; ``None`` leaves ``ctx.artifacts`` as ``None``.
    """

    sessions: SessionService
    artifacts: ArtifactService | None = None


def _as_app(value: object, spec: str) -> App:
    if isinstance(value, App):
        return value
    if isinstance(value, BaseAgent):
        return App(agents=[value])
    if isinstance(value, Sequence) and value and all(isinstance(a, BaseAgent) for a in value):
        return App(agents=list(value))
    if callable(value):
        return _as_app(value(), spec)
    raise AppLoadError(
        f"{spec!r} is a {type(value).__name__}; expected an App, an Agent, a list of agents, "
        "or a function returning one"
    )


def load_app(spec: str) -> App:
    """Import ``module:attr`` and return it as an :class:`App`.

    Raises:
        AppLoadError: The spec is malformed, the module does not import, or the attribute
            is missing or of the wrong kind.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise AppLoadError(f"--app must look like 'package.module:attribute', got {spec!r}")
    # As other Python app servers do: a module in the current directory is found.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise AppLoadError(f"cannot import {module_name!r} for --app {spec!r}: {err}") from err
    except Exception as err:  # the user's module raised while it was imported
        raise AppLoadError(
            f"importing {module_name!r} for --app {spec!r} raised {type(err).__name__}: {err}"
        ) from err
    try:
        value = getattr(module, attr)
    except AttributeError:
        raise AppLoadError(f"module {module_name!r} has no attribute {attr!r}") from None
    return _as_app(value, spec)
