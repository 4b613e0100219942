"""The ``adk-temporal`` command line.

Commands: ``demo`` (the seed scenario on an embedded server, then exit), ``dev`` (embedded
server plus a worker for the examples), ``server``, ``worker``, ``run`` (start an
invocation and follow it), ``chat`` (a conversation in the terminal, approvals asked
inline), ``pending``, ``confirm``, ``resume``, ``events`` and
``artifacts list|versions|cat``, ``rewind`` and ``fork`` (a session taken back to before an
invocation, or copied as of one), ``codec-server`` (the Temporal UI and CLI read encrypted
payloads through it), ``rotate-key`` and ``web`` (the HTTP approval gateway and console).
Commands that talk to Temporal take ``--address`` (``TEMPORAL_ADDRESS``), ``--namespace``,
``--task-queue`` and ``--encryption-key-file`` (``ADK_ENCRYPTION_KEY_FILE``: every payload
encrypted); commands that print data take ``--json``. ``--app``, ``--agent``, ``--user``
and ``--session`` default from ``ADK_APP``… and the project file (:mod:`.defaults`).

Exit statuses: ``0`` success, ``1`` an expected failure (one line on stderr, plus a hint:
server unreachable, unknown workflow or request id, busy session, missing store…), ``2`` a
usage error (missing option, malformed JSON argument), ``3`` the invocation paused and waits
for an approval or input (``run``), ``4`` the invocation failed (``run``), ``130``
interrupted by Ctrl-C.
"""

from __future__ import annotations

from .common import EXIT_ERROR, EXIT_FAILED, EXIT_PAUSED, CliError, main

__all__ = ["EXIT_ERROR", "EXIT_FAILED", "EXIT_PAUSED", "CliError", "main"]
