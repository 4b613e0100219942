"""Delivering a notification: one signed POST of a notice to one endpoint.

The engine retries a delivery that failed retryably (:class:`NotificationUndeliveredError`)
and gives up on one the endpoint refused (:class:`NotificationRejectedError`).
"""

from __future__ import annotations

import asyncio
import http.client
import logging
import time
import urllib.error
import urllib.request

from ..errors import NotificationRejectedError, NotificationUndeliveredError
from ..notifications import NoticeDelivery, Notifications, signed_request

__all__ = ["deliver_notice"]

logger = logging.getLogger(__name__)

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


async def deliver_notice(config: Notifications | None, delivery: NoticeDelivery) -> None:
    """POST the notice to its endpoint, signed with the app's secret.

    Raises:
        NotificationRejectedError: The endpoint answered a 4xx other than 408 and 429.
        NotificationUndeliveredError: Anything else went wrong — no notifications on this
            worker (another, configured worker of the deployment may take the retry), the
            endpoint unreachable, a timeout, another status.
    """
    if config is None:
        raise NotificationUndeliveredError(
            "this worker has no notifications configured (App.notifications)"
        )
    endpoint = config.endpoint(delivery.endpoint)
    if endpoint is None:
        # The endpoint was removed from the configuration since the run began.
        logger.warning("notification %s dropped: endpoint gone", delivery.notice.id)
        return
    body, headers = signed_request(config, endpoint, delivery.notice, now=time.time())
    timeout = config.timeout.total_seconds()
    try:
        status = await asyncio.to_thread(_post, endpoint.url, body, headers, timeout)
    except (OSError, http.client.HTTPException) as err:
        raise NotificationUndeliveredError(f"notification endpoint unreachable: {err}") from None
    if 200 <= status < 300:
        return
    if 400 <= status < 500 and status not in _RETRYABLE_4XX:
        raise NotificationRejectedError(f"notification endpoint refused it with HTTP {status}")
    raise NotificationUndeliveredError(f"notification endpoint answered HTTP {status}")
