"""``Schedules``: adk-temporal's schedules on Temporal — create, list, describe, pause,
unpause, trigger, backfill, delete — and the invocations each one started."""

from __future__ import annotations

from datetime import datetime

from temporalio.client import (
    Schedule,
    ScheduleActionExecutionStartWorkflow,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleBackfill,
    ScheduleDescription,
    ScheduleHandle,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleState,
)
from temporalio.common import SearchAttributePair, TypedSearchAttributes
from temporalio.service import RPCError, RPCStatusCode

from ..client import AdkClient
from ..flow.messages import as_content
from ..visibility import VisibilityPage, invocations_query, list_page, quoted
from ..workflows.fire import FIRE_ID_PREFIX, FIRE_WORKFLOW, FireInput
from ..workflows.messages import ADK_AGENT, ADK_APP, ADK_SCHEDULE, ADK_USER, BASELINE
from .spec import (
    AgentSchedule,
    InvalidScheduleError,
    Overlap,
    RecentFiring,
    ScheduleExistsError,
    ScheduleNotFoundError,
    ScheduleView,
)

__all__ = ["SCHEDULE_MEMO_KEY", "Schedules"]

SCHEDULE_MEMO_KEY = "adk_schedule"
"""The schedule's memo: its description as created, the message aside (the firing's input
holds that). Temporal keeps a cron expression only in its parsed form."""

_OVERLAPS: dict[Overlap, ScheduleOverlapPolicy] = {
    "skip": ScheduleOverlapPolicy.SKIP,
    "buffer_one": ScheduleOverlapPolicy.BUFFER_ONE,
    "buffer_all": ScheduleOverlapPolicy.BUFFER_ALL,
    "cancel_other": ScheduleOverlapPolicy.CANCEL_OTHER,
    "allow_all": ScheduleOverlapPolicy.ALLOW_ALL,
}


class Schedules:
    """The schedules of the namespace ``adk`` is connected to; firings run on its task queue.

    Args:
        adk: The client whose connection, task queue and budgets the schedules use.
    """

    def __init__(self, adk: AdkClient) -> None:
        self._adk = adk
        self._client = adk.client

    async def create(self, schedule: AgentSchedule) -> ScheduleView:
        """Create ``schedule`` on Temporal; its first firing is due at its next time.

        Raises:
            ScheduleExistsError: A schedule with this id exists.
            InvalidScheduleError: Temporal cannot read its cron expression or time zone.
            BudgetExceededError: The message is over the ``message_bytes`` budget.
        """
        schedule.check_message(self._adk.budgets)
        action = ScheduleActionStartWorkflow(
            FIRE_WORKFLOW,
            self._fire_input(schedule),
            id=f"{FIRE_ID_PREFIX}{schedule.schedule_id}",
            task_queue=self._adk.task_queue,
            typed_search_attributes=TypedSearchAttributes(
                [
                    SearchAttributePair(ADK_APP, schedule.app_name),
                    SearchAttributePair(ADK_SCHEDULE, schedule.schedule_id),
                ]
            ),
            static_summary=f"schedule {schedule.schedule_id} · {schedule.agent}",
        )
        spec = ScheduleSpec(
            cron_expressions=list(schedule.cron),
            intervals=[ScheduleIntervalSpec(every=schedule.every, offset=schedule.offset)]
            if schedule.every is not None
            else [],
            jitter=schedule.jitter,
            time_zone_name=schedule.time_zone,
        )
        policy = SchedulePolicy(
            overlap=_OVERLAPS[schedule.overlap],
            catchup_window=schedule.catchup_window,
            pause_on_failure=schedule.pause_on_failure,
        )
        state = ScheduleState(paused=schedule.paused, note=schedule.note)
        try:
            await self._client.create_schedule(
                schedule.schedule_id,
                Schedule(action=action, spec=spec, policy=policy, state=state),
                memo={SCHEDULE_MEMO_KEY: schedule.model_dump(mode="json", exclude={"message"})},
                search_attributes=TypedSearchAttributes(
                    [
                        SearchAttributePair(ADK_APP, schedule.app_name),
                        SearchAttributePair(ADK_USER, schedule.user_id),
                        SearchAttributePair(ADK_AGENT, schedule.agent),
                    ]
                ),
            )
        except ScheduleAlreadyRunningError as err:
            raise ScheduleExistsError(
                f"a schedule with id {schedule.schedule_id!r} exists; delete it first or "
                "choose another id"
            ) from err
        except RPCError as err:
            if err.status != RPCStatusCode.INVALID_ARGUMENT:
                raise
            # A cron expression or a time zone Temporal cannot read: the caller's mistake.
            raise InvalidScheduleError(
                f"invalid schedule {schedule.schedule_id!r}: Temporal refused it: {err.message}"
            ) from err
        return await self.describe(schedule.schedule_id)

    def _fire_input(self, schedule: AgentSchedule) -> FireInput:
        return FireInput(
            schedule_id=schedule.schedule_id,
            app_name=schedule.app_name,
            user_id=schedule.user_id,
            agent_name=schedule.agent,
            message=as_content(schedule.message, self._adk.budgets),
            sessions=schedule.sessions,
            session_id=schedule.shared_session if schedule.sessions == "shared" else None,
            double_texting=schedule.double_texting,
            config=schedule.config,
            budgets=self._adk.budgets,
            baseline=BASELINE,
            answer_address=self._client.service_client.config.target_host,
        )

    async def describe(self, schedule_id: str) -> ScheduleView:
        """The schedule, its state and its latest firings.

        Raises:
            ScheduleNotFoundError: No schedule of adk-temporal has this id.
        """
        description = await self._description(schedule_id)
        action = description.schedule.action
        assert isinstance(action, ScheduleActionStartWorkflow)
        [fire] = await self._client.data_converter.decode(action.args, [FireInput])
        created = (await description.memo()).get(SCHEDULE_MEMO_KEY)
        parts = fire.message.parts if fire.message is not None else None
        message = "".join(p.text or "" for p in parts or [])
        if created is None:
            return _view(_made_elsewhere(fire, message, description), description)
        return _view(AgentSchedule.model_validate({**created, "message": message}), description)

    async def list(self, *, app_name: str | None = None) -> list[ScheduleView]:
        """Every schedule of adk-temporal (of ``app_name`` only, when given), by id.

        Visibility lags a little behind a schedule's creation and deletion.
        """
        query = f"AdkApp = {quoted(app_name, 'app_name')}" if app_name else None
        views: list[ScheduleView] = []
        async for listed in await self._client.list_schedules(query=query):
            action = listed.schedule.action if listed.schedule else None
            if getattr(action, "workflow", None) != FIRE_WORKFLOW:
                continue
            try:
                views.append(await self.describe(listed.id))
            except ScheduleNotFoundError:
                continue  # deleted since it was listed
        return sorted(views, key=lambda v: v.schedule.schedule_id)

    async def pause(self, schedule_id: str, note: str | None = None) -> None:
        """Stop the schedule firing until it is unpaused; ``note`` says why.

        Raises:
            ScheduleNotFoundError: No schedule of adk-temporal has this id.
        """
        await (await self._handle(schedule_id)).pause(note=note or "paused")

    async def unpause(self, schedule_id: str, note: str | None = None) -> None:
        """Let the schedule fire again (firings missed meanwhile follow the catch-up window).

        Raises:
            ScheduleNotFoundError: No schedule of adk-temporal has this id.
        """
        await (await self._handle(schedule_id)).unpause(note=note or "unpaused")

    async def trigger(self, schedule_id: str, *, overlap: Overlap | None = None) -> None:
        """Fire once now (a paused schedule too), under ``overlap`` or the schedule's policy.

        Raises:
            ScheduleNotFoundError: No schedule of adk-temporal has this id.
        """
        policy = _OVERLAPS[overlap] if overlap is not None else None
        await (await self._handle(schedule_id)).trigger(overlap=policy)

    async def backfill(
        self,
        schedule_id: str,
        start_at: datetime,
        end_at: datetime,
        *,
        overlap: Overlap | None = None,
    ) -> None:
        """Fire for every time the schedule was due from ``start_at`` to ``end_at``, as if
        it had then (each firing's session is named after its scheduled time).

        Raises:
            ScheduleNotFoundError: No schedule of adk-temporal has this id.
        """
        policy = _OVERLAPS[overlap] if overlap is not None else None
        await (await self._handle(schedule_id)).backfill(
            ScheduleBackfill(start_at=start_at, end_at=end_at, overlap=policy)
        )

    async def delete(self, schedule_id: str) -> None:
        """Delete the schedule; invocations it started run on.

        Raises:
            ScheduleNotFoundError: No schedule of adk-temporal has this id.
        """
        await (await self._handle(schedule_id)).delete()

    async def invocations(
        self, schedule_id: str, *, page_size: int = 50, page_token: str | None = None
    ) -> VisibilityPage:
        """One page of the invocations the schedule's firings started, newest first."""
        query = invocations_query(schedule_id=schedule_id)
        return await list_page(self._client, query, page_size=page_size, page_token=page_token)

    async def _handle(self, schedule_id: str) -> ScheduleHandle:
        """The handle of one of adk-temporal's schedules (never another's)."""
        await self._description(schedule_id)
        return self._client.get_schedule_handle(schedule_id)

    async def _description(self, schedule_id: str) -> ScheduleDescription:
        try:
            description = await self._client.get_schedule_handle(schedule_id).describe()
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise
            raise _not_found(schedule_id) from err
        action = description.schedule.action
        if not isinstance(action, ScheduleActionStartWorkflow) or action.workflow != FIRE_WORKFLOW:
            raise _not_found(schedule_id)
        return description


def _not_found(schedule_id: str) -> ScheduleNotFoundError:
    return ScheduleNotFoundError(
        f"no schedule of adk-temporal has id {schedule_id!r} (`adk-temporal schedule list` "
        "lists them)"
    )


def _made_elsewhere(
    fire: FireInput, message: str, description: ScheduleDescription
) -> AgentSchedule:
    """A schedule of firings made without our memo (by hand, with Temporal's own tools), as
    far as its firing input and Temporal's spec tell: shown, never checked."""
    spec = description.schedule.spec
    interval = spec.intervals[0] if spec.intervals else None
    return AgentSchedule.model_construct(
        schedule_id=fire.schedule_id,
        app_name=fire.app_name,
        user_id=fire.user_id,
        agent=fire.agent_name,
        message=message,
        cron=list(spec.cron_expressions),
        every=interval.every if interval is not None else None,
        sessions=fire.sessions,
        session_id=fire.session_id,
        double_texting=fire.double_texting,
        config=fire.config,
    )


def _view(schedule: AgentSchedule, description: ScheduleDescription) -> ScheduleView:
    info = description.info
    state = description.schedule.state
    recent = [
        RecentFiring(
            scheduled_at=a.scheduled_at, started_at=a.started_at, workflow_id=a.action.workflow_id
        )
        for a in info.recent_actions
        if isinstance(a.action, ScheduleActionExecutionStartWorkflow)
    ]
    return ScheduleView(
        schedule=schedule.model_copy(update={"paused": state.paused, "note": state.note}),
        paused=state.paused,
        note=state.note,
        next_runs=list(info.next_action_times)[:5],
        recent=recent,
        running=[
            r.workflow_id
            for r in info.running_actions
            if isinstance(r, ScheduleActionExecutionStartWorkflow)
        ],
        fired=info.num_actions,
        skipped_for_overlap=info.num_actions_skipped_overlap,
        missed_catchup=info.num_actions_missed_catchup_window,
    )
