"""``python -m adk_temporal.cli``: the ``adk-temporal`` command."""

from . import main

main()
