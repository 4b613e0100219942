"""``worker.freeze_heap`` moves the process's objects out of the collector's walks."""

from __future__ import annotations

import gc

from adk_temporal.worker import freeze_heap


def test_freeze_heap_freezes_what_the_process_holds() -> None:
    """Every object alive at the call is frozen; none is left for a full collection to walk
    but those made after it."""
    gc.unfreeze()
    try:
        freeze_heap()
        frozen = gc.get_freeze_count()
        assert frozen > 10_000
        assert frozen > 10 * len(gc.get_objects(generation=2))
    finally:
        gc.unfreeze()
