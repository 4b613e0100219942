"""Which queue a run starts on: what the client asks Temporal, and how long it trusts it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from temporalio.api.taskqueue.v1 import PollerInfo
from temporalio.api.workflowservice.v1 import (
    DescribeTaskQueueRequest,
    DescribeTaskQueueResponse,
)
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from adk_temporal import start_queues
from adk_temporal.start_queues import (
    POLLED_WITHIN,
    SEEN_SECONDS,
    STARTS_HERE_MARK,
    UNSEEN_SECONDS,
    StartQueues,
)


class Service:
    """A workflow service whose task queues have the pollers the test gives them."""

    def __init__(self) -> None:
        self.polled: dict[str, datetime] = {}
        self.asked: list[str] = []
        self.failing = False
        self.identity = f"1@host{STARTS_HERE_MARK} adk-apps=a"

    async def describe_task_queue(
        self, request: DescribeTaskQueueRequest, **_: Any
    ) -> DescribeTaskQueueResponse:
        """The queue's one poller, last seen when :attr:`polled` says."""
        self.asked.append(request.task_queue.name)
        await asyncio.sleep(0.01)  # concurrent starts overlap here
        if self.failing:
            raise RPCError("unavailable", RPCStatusCode.UNAVAILABLE, b"")
        seen = self.polled.get(request.task_queue.name)
        if seen is None:
            return DescribeTaskQueueResponse()
        stamp = Timestamp()
        stamp.FromDatetime(seen)
        return DescribeTaskQueueResponse(
            pollers=[PollerInfo(identity=self.identity, last_access_time=stamp)]
        )


class FakeClient:
    """Just what :class:`StartQueues` uses of a client."""

    namespace = "default"

    def __init__(self, service: Service) -> None:
        self.workflow_service = service


class Clock:
    """``time.monotonic`` the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The start queues' monotonic clock, under the test's hand."""
    moved = Clock()
    monkeypatch.setattr(start_queues, "monotonic", moved)
    return moved


def _queues(service: Service, *, own_queues: bool = True) -> StartQueues:
    client: Client = FakeClient(service)  # type: ignore[assignment]
    return StartQueues(client, "q", own_queues=own_queues)


async def test_a_polled_own_queue_is_where_runs_start_asked_once_for_many(clock: Clock) -> None:
    """Twenty starts at once: one question to Temporal, all on the app's queue."""
    service = Service()
    service.polled["q/apps/a"] = datetime.now(UTC)
    queues = _queues(service)
    started = await asyncio.gather(*(queues.of("a") for _ in range(20)))
    assert set(started) == {"q/apps/a"}
    assert service.asked == ["q/apps/a"]


async def test_unpolled_stale_or_unreadable_queues_start_runs_on_the_shared_queue(
    clock: Clock,
) -> None:
    """No poller, a poller gone for longer than POLLED_WITHIN, or Temporal unable to say:
    the shared queue, whose first step finds the app's worker wherever it polls."""
    service = Service()
    service.polled["q/apps/stale"] = datetime.now(UTC) - POLLED_WITHIN - timedelta(seconds=5)
    queues = _queues(service)
    assert await queues.of("none") == "q"
    assert await queues.of("stale") == "q"
    service.failing = True
    assert await queues.of("broken") == "q"


async def test_a_worker_of_an_earlier_release_on_the_own_queue_does_not_count(
    clock: Clock,
) -> None:
    """A poller without the mark would send a run started on its queue one queue further
    (``…/apps/a/apps/a``): the run starts on the shared queue instead."""
    service = Service()
    service.polled["q/apps/a"] = datetime.now(UTC)
    service.identity = "1@host adk-apps=a"
    assert await _queues(service).of("a") == "q"


async def test_what_was_seen_is_trusted_for_a_while(clock: Clock) -> None:
    """Not polled: asked again after UNSEEN_SECONDS, and then seen; polled: trusted for
    SEEN_SECONDS."""
    service = Service()
    queues = _queues(service)
    assert await queues.of("a") == "q"
    service.polled["q/apps/a"] = datetime.now(UTC)
    clock.now += UNSEEN_SECONDS - 1
    assert await queues.of("a") == "q"
    clock.now += 2
    assert await queues.of("a") == "q/apps/a"
    del service.polled["q/apps/a"]
    clock.now += SEEN_SECONDS - 1
    assert await queues.of("a") == "q/apps/a"
    clock.now += 2
    assert await queues.of("a") == "q"
    assert len(service.asked) == 3


async def test_own_queues_off_never_asks() -> None:
    """``own_queues=False``: every run on the client's queue, nothing asked."""
    service = Service()
    service.polled["q/apps/a"] = datetime.now(UTC)
    assert await _queues(service, own_queues=False).of("a") == "q"
    assert service.asked == []
