"""``adk-temporal web``: an HTTP gateway to invocations, answer links and a web console.

:func:`~adk_temporal.web.server.create_app` builds the ASGI app over a
:class:`~adk_temporal.web.gateway.Gateway`; the modules each do one job: ``auth`` (bearer
tokens), ``body`` (bounded bodies), ``models`` (JSON bodies), ``errors`` (refusals),
``gateway`` (the operations), ``api`` (the JSON routes), ``links`` (signed answer links),
``sse`` (event streams), ``openapi`` (the description), ``console``, ``forms`` (inputs from
JSON schemas), ``cookies`` (console sessions and CSRF), ``pages`` (HTML), ``server`` (the
ASGI app).
Needs the ``web`` extra: ``pip install 'adk-temporal[web]'``.
"""
