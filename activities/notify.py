"""``adk_notify``: post one notification to one endpoint, signed; Temporal retries it."""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from adk_temporal.errors import NotificationRejectedError, NotificationUndeliveredError
from adk_temporal.notifications import NoticeDelivery, Notifications
from adk_temporal.steps import deliver_notice

__all__ = ["NOTIFICATION_REJECTED", "NOTIFICATION_UNDELIVERED", "NotifyActivity"]

NOTIFICATION_REJECTED = "NotificationRejected"
"""The failure type of a delivery the endpoint refused for good (a 4xx): never retried."""

NOTIFICATION_UNDELIVERED = "NotificationUndelivered"
"""The failure type of a delivery that may succeed later: retried."""


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
        """POST the notice (``adk_temporal.steps.deliver_notice``); fail so Temporal retries.

        Raises:
            ApplicationError: ``NotificationRejected`` (non-retryable) when the endpoint
                refused it for good, ``NotificationUndelivered`` (retryable) otherwise.
        """
        try:
            await deliver_notice(self._config, delivery)
        except NotificationRejectedError as err:
            raise ApplicationError(
                str(err), type=NOTIFICATION_REJECTED, non_retryable=True
            ) from None
        except NotificationUndeliveredError as err:
            raise ApplicationError(str(err), type=NOTIFICATION_UNDELIVERED) from None
