"""What the HTTP API and the console do, over :class:`~adk_temporal.client.AdkClient`.

Answers go through the answer desk (:class:`~adk_temporal.answers.AnswerDesk`) with the
update sent first: with a worker running, the worker checks and applies it and nothing else
is asked of Temporal; when no worker takes it within a moment the desk reads the run. The
gateway only translates the desk's outcome: 200 applied, 202 accepted, and a refusal as its
status and error type, with the desk's reason and the earlier answer (who, when) in the body.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from temporalio.client import (
    WorkflowExecution,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
)
from temporalio.service import RPCError, RPCStatusCode

from ..answers import AnswerDesk, Outcome, RefusalReason, Refused
from ..app import App
from ..approvals import Grant, GrantTerms
from ..artifacts import (
    ArtifactService,
    GetArtifactVersionRequest,
    ListRequest,
    LoadRequest,
    VersionsRequest,
)
from ..client import AdkClient, InvocationHandle
from ..double_texting import DoubleTexting, QueuedSummary
from ..errors import (
    ArtifactNotFoundError,
    ArtifactServiceNotConfiguredError,
    InvalidArtifactRequestError,
    InvocationNotFoundError,
    SessionExistsError,
)
from ..ids import SessionKey, session_key_of, workflow_id_for
from ..keys import ForgetEntry, Target
from ..queues import unpolled_waits
from ..rewind import ForkResult, RewindResult
from ..sessions import Session, SessionService
from ..signing import AnswerLink
from ..visibility import (
    InvalidPageTokenError,
    invocations_query,
    list_page,
    published_or_unreadable,
    run_status,
)
from ..workflow._render import graph_view
from ..workflows.messages import ADK_AGENT, ADK_SESSION, ADK_USER, Published
from .errors import ApiError, api_error
from .models import (
    AnswerOutcome,
    CancelOutcome,
    PendingView,
    RunCreated,
    RunLinks,
    RunList,
    RunSummary,
    RunView,
)
from .stored import ArtifactContent, artifact_content

__all__ = ["ArtifactVersions", "Gateway", "session_path"]

_QUERY_SECONDS = 2.0
"""How long a query waits for a worker before the memo is read instead."""
_SETTLE_SECONDS = 5.0
"""How long an applied answer may take to show in what the run publishes."""


def session_path(ids: SessionKey, prefix: str = "/v1") -> str:
    """The resource of a session's invocation: ``{prefix}/apps/{app}/users/{user}/sessions/
    {session}``."""
    app, user, session = (quote(part, safe="") for part in ids)
    return f"{prefix}/apps/{app}/users/{user}/sessions/{session}"


def _ids_of(workflow_id: str) -> SessionKey:
    key = session_key_of(workflow_id)
    assert key is not None, "the waiting runs listed are invocations"
    return key


@dataclass(frozen=True)
class ArtifactVersions:
    """One artifact's versions, oldest first."""

    name: str
    versions: list[int]
    mime_types: list[str]


@dataclass
class Gateway:
    """The operations behind the routes: start, list, show, answer, cancel, read stores.

    Args:
        adk: A client on the workers' task queue, with their session store.
        sessions: That session store (the console shows events and state).
        artifacts: The workers' artifact store (the console shows versions).
        app: The served app: its agents are offered and checked; ``None`` checks nothing.
        temporal_ui: The Temporal UI's base URL, for links to runs; ``None`` for none.
        answer_wait: Seconds a checked answer waits for a worker before it becomes a signal.
        link_secret: Verifies answer links; ``None`` refuses every link.
        page_secret: Keys the page tokens the API and console hand out (HMAC), so a
            client cannot make one; ``None``: derived from ``link_secret``, so every
            gateway of a deployment takes the others' tokens, else a random key of this
            process (a token then outlives neither a restart nor a switch of replica).
        keepalive: Seconds of silence after which an event stream sends a comment, so
            proxies in between do not close it while nothing happens.
    """

    adk: AdkClient
    sessions: SessionService | None = None
    artifacts: ArtifactService | None = None
    app: App | None = None
    temporal_ui: str | None = None
    answer_wait: float = 5.0
    link_secret: bytes | None = field(default=None, repr=False)
    keepalive: float = 15.0
    page_secret: bytes | None = field(default=None, repr=False)
    desk: AnswerDesk = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.desk = AnswerDesk(self.adk)
        if self.page_secret is None:
            self.page_secret = (
                hmac.new(self.link_secret, b"adk-temporal page tokens", hashlib.sha256).digest()
                if self.link_secret is not None
                else secrets.token_bytes(32)
            )

    # ---------------------------------------------------------------- runs

    def handle(self, ids: SessionKey) -> InvocationHandle:
        """The handle of the session's invocation (the ids are checked first)."""
        return self.adk.handle(workflow_id_for(ids))

    def agents(self, app_name: str) -> list[str] | None:
        """The agent names the served app offers under ``app_name``; ``None``: unknown."""
        if self.app is None or (self.app.name is not None and self.app.name != app_name):
            return None
        return [agent.name for agent in self.app.agents]

    def links(self, ids: SessionKey, workflow_id: str, run_id: str | None) -> RunLinks:
        """Where a run's resources are."""
        base = session_path(ids)
        ui = None
        if self.temporal_ui and run_id:
            namespace = quote(self.adk.client.namespace, safe="")
            wid = quote(workflow_id, safe="")
            root = self.temporal_ui.rstrip("/")
            ui = f"{root}/namespaces/{namespace}/workflows/{wid}/{run_id}/history"
        return RunLinks(
            self=base,
            pending=f"{base}/pending",
            events=f"{base}/events",
            confirm=f"{base}/confirm",
            resume=f"{base}/resume",
            cancel=f"{base}/cancel",
            temporal_ui=ui,
        )

    async def start(
        self,
        app_name: str,
        user_id: str,
        session_id: str | None,
        agent: str,
        message: str,
        *,
        pin_agent: bool = False,
        double_texting: DoubleTexting | None = None,
        started_by: str | None = None,
    ) -> RunCreated:
        """Start an invocation; a new session id when none is given (``pin_agent`` as for
        :class:`~adk_temporal.run_config.RunConfig`); a busy session takes the message by
        ``double_texting`` (the app's policy when ``None``), and a queued one is created
        ``queued``; ``started_by`` is the authenticated principal starting it.

        Raises:
            ApiError: 422 for an agent the served app does not have.
            SessionBusyError: An invocation already runs in the session and the message
                was refused.
        """
        offered = self.agents(app_name)
        if offered is not None and agent not in offered:
            raise ApiError(
                422,
                "unknown_agent",
                f"app {app_name!r} has no agent {agent!r}; it has: {', '.join(offered)}",
            )
        ids = SessionKey(app_name, user_id, session_id or f"s-{uuid.uuid4().hex[:12]}")
        handle = await self.adk.start(
            *ids,
            agent,
            message,
            stream=True,
            pin_agent=pin_agent,
            double_texting=double_texting,
            started_by=started_by,
        )
        return RunCreated(
            workflow_id=handle.workflow_id,
            run_id=handle.run_id,
            app=ids.app_name,
            user_id=ids.user_id,
            session_id=ids.session_id,
            status="queued" if handle.is_queued else "running",
            links=self.links(ids, handle.workflow_id, handle.run_id),
            invocation_id=handle.invocation_id,
        )

    async def withdraw(self, ids: SessionKey, invocation_id: str) -> QueuedSummary:
        """Take a queued message out of the session's queue before it runs.

        Raises:
            QueuedMessageNotFoundError: No such message waits.
        """
        return await self.adk.withdraw(workflow_id_for(ids), invocation_id)

    async def list_runs(
        self,
        app_name: str,
        *,
        statuses: Sequence[str] = (),
        user_id: str | None = None,
        session_id: str | None = None,
        limit: int = 50,
    ) -> list[RunSummary]:
        """The app's newest ``limit`` invocations, from one visibility call (no worker)."""
        listed = await self.runs_page(
            app_name, statuses=statuses, user_id=user_id, session_id=session_id, page_size=limit
        )
        return listed.runs

    async def runs_page(
        self,
        app_name: str,
        *,
        statuses: Sequence[str] = (),
        user_id: str | None = None,
        session_id: str | None = None,
        page_size: int = 50,
        page_token: str | None = None,
    ) -> RunList:
        """One page of the app's invocations, newest first, and the next page's token.

        Raises:
            ApiError: 400 when the page token was not handed out by this listing.
        """
        query = invocations_query(
            app_name=app_name, user_id=user_id, session_id=session_id, statuses=statuses
        )
        try:
            page = await list_page(
                self.adk.client,
                query,
                page_size=page_size,
                page_token=page_token,
                key=self.page_secret,
            )
        except InvalidPageTokenError as err:
            raise ApiError(400, "invalid_page_token", str(err)) from err
        return RunList(
            runs=[await self._summary(app_name, wf) for wf in page.executions],
            next_page_token=page.next_page_token,
        )

    async def _summary(self, app_name: str, wf: WorkflowExecution) -> RunSummary:
        published, unreadable = await published_or_unreadable(wf)
        attributes = wf.typed_search_attributes
        ids = SessionKey(
            app_name, attributes.get(ADK_USER) or "", attributes.get(ADK_SESSION) or ""
        )
        return RunSummary(
            workflow_id=wf.id,
            run_id=wf.run_id,
            app=app_name,
            user_id=ids.user_id,
            session_id=ids.session_id,
            status=run_status(wf),
            agent=attributes.get(ADK_AGENT) or "",
            start_time=wf.start_time.isoformat() if wf.start_time else None,
            close_time=wf.close_time.isoformat() if wf.close_time else None,
            waiting_for=[r.model_dump(mode="json") for r in published.requests],
            unreadable=unreadable,
            links=self.links(ids, wf.id, wf.run_id),
        )

    async def described(
        self, handle: InvocationHandle
    ) -> tuple[WorkflowExecutionDescription, Published]:
        """Temporal's description of the run and what it published (no worker needed).

        Raises:
            ApiError: 404 when the session has no invocation.
        """
        try:
            description = await handle.describe()
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                raise ApiError(
                    404,
                    "no_invocation",
                    f"no invocation {handle.workflow_id!r} in namespace "
                    f"{self.adk.client.namespace!r}",
                ) from err
            raise
        return description, Published.from_memo(await description.memo())

    async def show(self, ids: SessionKey) -> RunView:
        """The session's latest invocation: status, open requests, refused answers, and
        steps waiting on a task queue no worker polls."""
        handle = self.handle(ids)
        description, published = await self.described(handle)
        return RunView(
            workflow_id=description.id,
            run_id=description.run_id,
            app=ids.app_name,
            user_id=ids.user_id,
            session_id=ids.session_id,
            status=run_status(description),
            temporal_status=description.status.name.lower() if description.status else None,
            agent=description.typed_search_attributes.get(ADK_AGENT) or "",
            start_time=description.start_time.isoformat() if description.start_time else None,
            close_time=description.close_time.isoformat() if description.close_time else None,
            waiting_for=[r.model_dump(mode="json") for r in published.requests],
            refused_answers=published.refused,
            unpolled_waits=await unpolled_waits(self.adk.client, description),
            links=self.links(ids, description.id, description.run_id),
            graph=graph_view(published.graph, published.nodes) if published.graph else None,
            queued=[q.model_dump(mode="json") for q in published.queued],
            schedule_id=published.schedule_id,
        )

    async def pending(self, ids: SessionKey) -> PendingView:
        """The open requests whole from a worker, or as published when none answers."""
        handle = self.handle(ids)
        _, published = await self.described(handle)
        if published.requests:
            try:
                async with asyncio.timeout(_QUERY_SECONDS):
                    full = await handle.pending()
                return PendingView(
                    workflow_id=handle.workflow_id,
                    source="worker",
                    requests=[r.model_dump(mode="json") for r in full],
                )
            except (RPCError, TimeoutError):
                pass  # no worker: what Temporal serves itself must do
        return PendingView(
            workflow_id=handle.workflow_id,
            source="memo",
            requests=[r.model_dump(mode="json") for r in published.requests],
        )

    async def waiting(
        self, app_name: str, *, page_size: int = 50, page_token: str | None = None
    ) -> tuple[list[tuple[SessionKey, Published]], str | None]:
        """One page of the app's runs waiting for an answer, newest first, with what they
        published (visibility, no worker), and the next page's token.

        Raises:
            ApiError: 400 when the page token was not handed out by this listing.
        """
        try:
            found, token = await self.adk.waiting_page(
                task_queue=self.adk.task_queue,
                app_name=app_name,
                page_size=page_size,
                page_token=page_token,
                page_key=self.page_secret,
            )
        except InvalidPageTokenError as err:
            raise ApiError(400, "invalid_page_token", str(err)) from err
        return [(_ids_of(wid), p) for wid, p in found], token

    async def cancel(self, ids: SessionKey) -> CancelOutcome:
        """Ask Temporal to cancel the invocation.

        Raises:
            ApiError: 404 without an invocation, 409 naming its state when it is not running
                (Temporal would accept the request for a closed run and do nothing).
        """
        handle = self.handle(ids)
        await self._require_running(handle, "only a running invocation can be cancelled")
        await handle.cancel()
        return CancelOutcome(workflow_id=handle.workflow_id, cancel_requested=True)

    # ---------------------------------------------------------------- answers

    async def confirm(
        self,
        ids: SessionKey,
        confirmation_id: str,
        confirmed: bool,
        payload: Any = None,
        call_digest: str | None = None,
        *,
        answered_by: str | None = None,
        channel: str = "gateway",
        edited_args: dict[str, Any] | None = None,
        groups: Sequence[str] | None = None,
        grant: GrantTerms | None = None,
    ) -> AnswerOutcome:
        """Approve or reject a confirmation request through the answer desk (update first),
        recorded as answered by ``answered_by`` (authenticated, in ``groups``) through
        ``channel``; an approval with ``edited_args`` runs the call with them, one with
        ``grant`` lets later calls of the tool run unasked.

        Raises:
            ApiError: The desk refused the answer (:func:`refusal_error`).
        """
        workflow_id = workflow_id_for(ids)
        outcome = await self.desk.confirm(
            workflow_id,
            confirmation_id,
            confirmed,
            payload,
            call_digest=call_digest,
            answered_by=answered_by,
            channel=channel,
            edited_args=edited_args,
            groups=groups,
            grant=grant,
            policy="update_first",
            wait=self.answer_wait,
        )
        return _answered(workflow_id, confirmation_id, outcome)

    async def resume(
        self,
        ids: SessionKey,
        interrupt_id: str,
        value: Any,
        *,
        answered_by: str | None = None,
        channel: str = "gateway",
        groups: Sequence[str] | None = None,
    ) -> AnswerOutcome:
        """Answer an input request through the answer desk, recorded as :meth:`confirm`
        records it."""
        workflow_id = workflow_id_for(ids)
        outcome = await self.desk.resume(
            workflow_id,
            interrupt_id,
            value,
            answered_by=answered_by,
            channel=channel,
            groups=groups,
            policy="update_first",
            wait=self.answer_wait,
        )
        return _answered(workflow_id, interrupt_id, outcome)

    async def _require_running(self, handle: InvocationHandle, why: str) -> None:
        """Raise 409 ``run_closed``, naming the run's state and ``why``, unless it runs."""
        description, _ = await self.described(handle)
        if description.status != WorkflowExecutionStatus.RUNNING:
            raise ApiError(
                409, "run_closed", f"{handle.workflow_id} is {run_status(description)}: {why}"
            )

    async def settled(self, ids: SessionKey, request_id: str) -> None:
        """Wait (a few seconds at most) until an applied answer's request is no longer
        published, so a page shown next does not offer it again."""
        handle = self.handle(ids)
        try:
            async with asyncio.timeout(_SETTLE_SECONDS):
                while any(r.id == request_id for r in (await self.described(handle))[1].requests):
                    await asyncio.sleep(0.1)
        except TimeoutError:
            pass  # the page then shows it still open; a reload shows the truth

    # ---------------------------------------------------------------- links

    async def apply_link(self, link: AnswerLink) -> AnswerOutcome:
        """Apply a verified answer link once, through the answer desk, checked first: a
        link names an invocation, which only a read of the run can tell.

        Raises:
            ApiError: The desk refused it: 409 ``link_used`` when its request is no longer
                open (answered already: a reused link, or expired), otherwise as
                :func:`refusal_error` (``run_closed``, ``wrong_run``, ``answer_pending``…).
        """
        outcome = await self.desk.confirm(
            link.workflow_id,
            link.request_id,
            link.decision == "approve",
            call_digest=link.call_digest or None,
            answered_by=link.recipient,
            groups=link.groups,
            channel="link",
            policy="check_first",
            wait=self.answer_wait,
            invocation_id=link.invocation_id,
        )
        return _answered(link.workflow_id, link.request_id, outcome, _link_refusal)

    # ---------------------------------------------------------------- rewind, fork

    async def rewind(
        self, ids: SessionKey, before_invocation_id: str, event_id: str | None = None
    ) -> RewindResult:
        """Rewind the session to before an invocation (:meth:`AdkClient.rewind`).

        Raises:
            ApiError: 404 for an unknown invocation, 503 without the workers' stores.
            SessionBusyError: An invocation of the session runs or waits (409).
        """
        self._require_sessions()
        try:
            return await self.adk.rewind(
                ids, before_invocation_id, event_id=event_id, artifact_service=self.artifacts
            )
        except (InvocationNotFoundError, ArtifactServiceNotConfiguredError) as err:
            raise _store_refusal(err) from err

    async def fork(
        self, ids: SessionKey, invocation_id: str | None, new_session_id: str | None
    ) -> ForkResult:
        """Copy the session as of an invocation into a new session (:meth:`AdkClient.fork`).

        Raises:
            ApiError: 404 for an unknown invocation, 409 for a taken new session id, 503
                without the workers' stores.
            SessionBusyError: The fork would copy an invocation that runs or waits (409).
        """
        self._require_sessions()
        try:
            return await self.adk.fork(
                ids, invocation_id, new_session_id=new_session_id, artifact_service=self.artifacts
            )
        except (
            InvocationNotFoundError,
            ArtifactServiceNotConfiguredError,
            SessionExistsError,
        ) as err:
            raise _store_refusal(err) from err

    # ---------------------------------------------------------------- forget

    async def forget(
        self, target: Target, *, by: str, reason: str, dry_run: bool = False
    ) -> ForgetEntry:
        """Forget a session or a user (:meth:`AdkClient.forget`), logged with ``by`` (the
        token) and ``reason``.

        Raises:
            ApiError: 503 without the workers' session store.
            CannotForgetError: No data keys, or keys too wide for the target (409).
        """
        self._require_sessions()
        return await self.adk.forget(
            target,
            by=by,
            reason=reason,
            artifact_service=self.artifacts,
            channel="gateway",
            dry_run=dry_run,
        )

    def _require_sessions(self) -> None:
        if self.sessions is None:
            raise ApiError(
                503,
                "no_session_store",
                "this gateway was started without the workers' session store",
            )

    # ---------------------------------------------------------------- stores

    async def grants(self, app_name: str, user_id: str, session_id: str | None) -> list[Grant]:
        """The standing grants of the user (those ``session_id``'s calls may use); none
        without a session store."""
        if self.sessions is None:
            return []
        return await self.sessions.list_grants(app_name, user_id, session_id)

    async def session(self, ids: SessionKey) -> Session | None:
        """The session as stored (events, state); ``None`` before its first step."""
        if self.sessions is None:
            return None
        try:
            return await self.sessions.get(ids)
        except LookupError:
            return None

    async def artifact_versions(self, ids: SessionKey) -> list[ArtifactVersions]:
        """Every artifact the session sees, with its versions."""
        if self.artifacts is None:
            return []
        listed = await self.artifacts.list(ListRequest.of(ids))
        found: list[ArtifactVersions] = []
        for name in listed.file_names:
            versions = (
                await self.artifacts.versions(VersionsRequest.of(ids, file_name=name))
            ).versions
            mime_types = [
                (
                    await self.artifacts.get_artifact_version(
                        GetArtifactVersionRequest.of(ids, file_name=name, version=v)
                    )
                ).artifact_version.mime_type
                for v in versions
            ]
            found.append(ArtifactVersions(name, list(versions), mime_types))
        return found

    async def artifact(self, ids: SessionKey, name: str, version: int) -> ArtifactContent:
        """One version of the session's artifact ``name`` (``0``: the latest).

        Raises:
            ApiError: 404 when the name or the version does not exist (or is not a valid
                artifact name), 503 without an artifact store.
        """
        if self.artifacts is None:
            raise ApiError(503, "no_artifact_store", "the gateway has no artifact store")
        try:
            if not version:
                found = await self.artifacts.versions(VersionsRequest.of(ids, file_name=name))
                version = found.versions[-1]
            loaded = await self.artifacts.load(LoadRequest.of(ids, file_name=name, version=version))
        except (ArtifactNotFoundError, InvalidArtifactRequestError) as err:
            raise ApiError(404, "unknown_artifact", str(err)) from err
        return artifact_content(name, version, loaded.part)


def _store_refusal(err: Exception) -> ApiError:
    """The refusal of a rewind or fork the error tree maps to no status of its own."""
    if isinstance(err, InvocationNotFoundError):
        return ApiError(404, "unknown_invocation", str(err))
    if isinstance(err, SessionExistsError):
        return ApiError(409, "session_exists", str(err))
    return ApiError(503, "no_artifact_store", str(err))


_REFUSALS: dict[RefusalReason, tuple[int, str]] = {
    "not_open": (404, "unknown_request"),
    "wrong_kind": (404, "unknown_request"),
    "already_answered": (409, "already_answered"),
    "expired": (409, "expired"),
    "held": (409, "answer_pending"),
    "run_closed": (409, "run_closed"),
    "no_run": (404, "no_invocation"),
    "wrong_run": (409, "wrong_run"),
    "anonymous": (403, "anonymous"),
    "not_an_approver": (403, "not_an_approver"),
    "self_approval": (403, "self_approval"),
    "duplicate_vote": (409, "duplicate_vote"),
    "claimed": (409, "claimed"),
    "stale": (409, "stale"),
}
"""The HTTP status and error type of each reason the desk refuses an answer for; an
``invalid`` answer takes its typed error's (``invalid_input``, ``confirmation_mismatch``…)."""


def _answered(
    workflow_id: str,
    request_id: str,
    outcome: Outcome,
    refusal: Callable[[Refused], ApiError] | None = None,
) -> AnswerOutcome:
    """The desk's outcome as the gateway's: applied or accepted, else ``refusal(...)``
    raised (by default :func:`refusal_error`)."""
    if isinstance(outcome, Refused):
        raise (refusal or refusal_error)(outcome)
    return AnswerOutcome(workflow_id=workflow_id, request_id=request_id, outcome=outcome.kind)


def refusal_error(refusal: Refused) -> ApiError:
    """The desk's refusal as the gateway's: status and type by reason, the reason itself and
    the earlier answer (who, when) in the body."""
    known = api_error(refusal.error) if refusal.error is not None else None
    if known is not None and refusal.reason == "invalid":
        return ApiError(known.status, known.type, refusal.message, refusal=refusal)
    status, kind = _REFUSALS.get(refusal.reason, (409, refusal.reason))
    return ApiError(status, kind, refusal.message, refusal=refusal)


def _link_refusal(refusal: Refused) -> ApiError:
    """A link's refusal: a request no longer open is a used link (409 ``link_used``)."""
    if refusal.reason in ("not_open", "already_answered", "expired"):
        message = f"this link can no longer be used: {refusal.message}"
        return ApiError(409, "link_used", message, refusal=refusal)
    return refusal_error(refusal)
