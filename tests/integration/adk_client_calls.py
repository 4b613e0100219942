"""Calls google-adk's own ``AdkWebServerClient`` makes, unchanged, against a gateway; run
with the Python of the google-adk environment (:mod:`tests.integration.adk_env`), never
the project's. Prints one JSON document of what came back; the tests judge it.

``all BASE``: every method of the client, ``run_agent`` without and with streaming, and a
confirmation answered by the next run. ``pause BASE``: a new session whose run pauses for
approval. ``answer BASE SESSION CALL_ID``: the approval, sent as ADK's next ``/run``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.request
from typing import Any

from google.adk.cli.adk_web_server import RunAgentRequest
from google.adk.cli.conformance.adk_web_server_client import AdkWebServerClient
from google.adk.events.event import Event
from google.genai import types

APP = "adkweb"
USER = "u-adk"


def _text(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def _summary(event: Event) -> dict[str, Any]:
    parts = event.content.parts if event.content and event.content.parts else []
    return {
        "author": event.author,
        "partial": bool(event.partial),
        "text": "".join(p.text or "" for p in parts),
        "calls": [p.function_call.name for p in parts if p.function_call],
        "call_ids": [p.function_call.id for p in parts if p.function_call],
        "responses": [p.function_response.response for p in parts if p.function_response],
        "long_running": sorted(event.long_running_tool_ids or []),
        "confirmations": sorted(event.actions.requested_tool_confirmations),
    }


async def _run(client: AdkWebServerClient, session: str, text: str, streaming: bool) -> list[Any]:
    request = RunAgentRequest(
        app_name=APP, user_id=USER, session_id=session, new_message=_text(text), streaming=streaming
    )
    return [_summary(e) async for e in client.run_agent(request)]


def _confirmation_id(events: list[dict[str, Any]]) -> str:
    return str(
        next(
            i
            for e in events
            for n, i in zip(e["calls"], e["call_ids"], strict=True)
            if n == "adk_request_confirmation"
        )
    )


async def answer(base: str, session: str, call_id: str) -> list[Any]:
    """ADK's answer to a confirmation: the next ``/run`` holds its function response."""
    body = {
        "appName": APP,
        "userId": USER,
        "sessionId": session,
        "newMessage": {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": call_id,
                        "name": "adk_request_confirmation",
                        "response": {"confirmed": True},
                    }
                }
            ],
        },
    }
    request = urllib.request.Request(
        f"{base}/run",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=300) as reply:
        return [_summary(Event.model_validate(e)) for e in json.loads(reply.read())]


async def pause(base: str) -> dict[str, Any]:
    """A new session whose run waits for approval of ``pay``."""
    async with AdkWebServerClient(base) as client:
        session = await client.create_session(
            app_name=APP, user_id=USER, state={"user_name": "Ada"}
        )
        events = await _run(client, session.id, "pay 5", streaming=False)
    return {"session": session.id, "events": events, "call_id": _confirmation_id(events)}


async def every_call(base: str) -> dict[str, Any]:
    """Every method of the client, with and without streaming."""
    found: dict[str, Any] = {}
    async with AdkWebServerClient(base) as client:
        found["version"] = await client.get_version_data()
        created = await client.create_session(
            app_name=APP, user_id=USER, state={"user_name": "Ada"}
        )
        found["created_state"] = created.state
        updated = await client.update_session(
            app_name=APP, user_id=USER, session_id=created.id, state_delta={"tier": "gold"}
        )
        found["updated_state"] = updated.state
        found["plain"] = await _run(client, created.id, "weather in Rome", streaming=False)
        found["streamed"] = await _run(client, created.id, "weather in Oslo", streaming=True)
        found["paused"] = await _run(client, created.id, "pay 5", streaming=True)
        found["answered"] = await answer(base, created.id, _confirmation_id(found["paused"]))
        got = await client.get_session(app_name=APP, user_id=USER, session_id=created.id)
        found["state"] = got.state
        found["authors"] = [e.author for e in got.events]
        one = await client.get_artifact_version_metadata(
            app_name=APP,
            user_id=USER,
            session_id=created.id,
            artifact_name="receipt.txt",
            version=1,
        )
        every = await client.list_artifact_versions_metadata(
            app_name=APP, user_id=USER, session_id=created.id, artifact_name="receipt.txt"
        )
        found["artifact"] = [one.version, one.mime_type, [v.version for v in every]]
        await client.delete_session(app_name=APP, user_id=USER, session_id=created.id)
        try:
            await client.get_session(app_name=APP, user_id=USER, session_id=created.id)
            found["after_delete"] = 200
        except Exception as err:  # httpx's HTTPStatusError, from inside ADK's client
            found["after_delete"] = vars(err)["response"].status_code
    return found


def main() -> None:
    command, base, *rest = sys.argv[1:]
    if command == "all":
        result: Any = asyncio.run(every_call(base))
    elif command == "pause":
        result = asyncio.run(pause(base))
    else:
        result = asyncio.run(answer(base, *rest))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
