"""An HTTP server run on a background thread: the codec server and the test servers share it."""

from __future__ import annotations

import threading
from http.server import HTTPServer

__all__ = ["BackgroundServer"]


class BackgroundServer:
    """Serves ``server`` on a daemon thread between :meth:`start` and :meth:`stop`.

    Args:
        server: A bound ``http.server`` server.
        name: The thread's name (it shows in thread dumps).
    """

    def __init__(self, server: HTTPServer, name: str) -> None:
        self.server = server
        self._name = name
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port the server is bound to."""
        return int(self.server.server_address[1])

    def start(self) -> None:
        """Serve in the background; a no-op when already serving."""
        if self._thread is None:
            self._thread = threading.Thread(
                # A short poll interval keeps stop() fast: shutdown() waits for the next poll.
                target=self.server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=self._name,
                daemon=True,
            )
            self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self.server.shutdown()
            self._thread.join()
            self._thread = None
        self.server.server_close()
