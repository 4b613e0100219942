"""``SessionService``: what a worker needs of its session store — six jobs, one backend.

A backend implements the conversation (:class:`.ConversationStore`), the staging area of
tool responses (:class:`.StagingArea`), the side channel of streamed pieces
(:class:`.PartialChannel`), the token ledger of cumulative budgets (:class:`.TokenLedger`),
the start slots of rate-limited model calls (:class:`.CallSlots`), the standing grants of
approvals (:class:`.GrantStore`) and the receipts of calls with external effects
(:class:`.EffectReceipts`) together, over one storage every worker shares, because an
append takes its staged responses and supersedes its pieces in the same transaction. Code
that needs one job takes
the narrow interface; workers and runners take this one.
"""

from __future__ import annotations

from types import TracebackType
from typing import Protocol, Self

from .call_slots import CallSlots
from .conversations import ConversationStore
from .grants import GrantStore
from .ledger import TokenLedger
from .partials import PartialChannel
from .receipts import EffectReceipts
from .staging import StagingArea

__all__ = ["SessionService"]


class SessionService(
    ConversationStore,
    StagingArea,
    PartialChannel,
    TokenLedger,
    CallSlots,
    GrantStore,
    EffectReceipts,
    Protocol,
):
    """A session store: conversations, staged responses, partial pieces, the token ledger,
    model call slots, standing grants and effect receipts, closable."""

    async def close(self) -> None:
        """Release connections and threads; the service is unusable afterwards.

        Closing twice is harmless. Stores that hold nothing to release do nothing.
        """
        ...

    async def __aenter__(self) -> Self:
        """Return the service; backends connect on first use."""
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Close the service."""
        await self.close()
