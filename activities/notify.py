"""``adk_notify``: post one notification to one endpoint, signed; Temporal retries it."""

from __future__ import annotations

import asyncio
import http.client
import time
import urllib.error
import urllib.request

from temporalio import activity
from temporalio.exceptions import ApplicationError

from adk_temporal.notifications import NoticeDelivery, Notifications, signed_request

__all__ = ["NOTIFICATION_REJECTED", "NotifyActivity"]

NOTIFICATION_REJECTED = "NotificationRejected"
"""The failure type of a delivery the endpoint refused for good (a 4xx): never retried."""

# A server-side timeout and a rate limit: 4xx, yet worth another attempt.
_RETRYABLE_4XX = frozenset({408, 429})


def _post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> int:
    """POST and return the status; the standard library, so no HTTP client is required."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as err:
        return err.code


class NotifyActivity:
    """Delivers notifications with the serving app's endpoints, headers and secret.

    Args:
        notifications: The app's configuration; ``None`` on a worker without it, which
            fails each delivery retryably so a configured worker of the deployment takes it.
    """

    def __init__(self, notifications: Notifications | None) -> None:
        self._config = notifications

    @activity.defn(name="adk_notify")
    async def run(self, delivery: NoticeDelivery) -> None:
        """POST the notice to the endpoint; raise so that Temporal retries a failure.

        Raises:
            ApplicationError: The endpoint did not take it: non-retryable
                (``NotificationRejected``) on a 4xx other than 408 and 429, retryable on
                anything else, connection errors and timeouts included.
        """
        config = self._config
        if config is None:
            raise ApplicationError(
                "this worker has no notifications configured (App.notifications)",
                type="NotificationsNotConfigured",
            )
        endpoint = config.endpoint(delivery.endpoint)
        if endpoint is None:
            # The endpoint was removed from the configuration since the run began.
            activity.logger.warning("notification %s dropped: endpoint gone", delivery.notice.id)
            return
        body, headers = signed_request(config, endpoint, delivery.notice, now=time.time())
        timeout = config.timeout.total_seconds()
        try:
            status = await asyncio.to_thread(_post, endpoint.url, body, headers, timeout)
        except (OSError, http.client.HTTPException) as err:
            raise ApplicationError(
                f"notification endpoint unreachable: {err}", type="NotificationUndelivered"
            ) from None
        if 200 <= status < 300:
            return
        if 400 <= status < 500 and status not in _RETRYABLE_4XX:
            raise ApplicationError(
                f"notification endpoint refused it with HTTP {status}",
                type=NOTIFICATION_REJECTED,
                non_retryable=True,
            )
        raise ApplicationError(
            f"notification endpoint answered HTTP {status}", type="NotificationUndelivered"
        )
