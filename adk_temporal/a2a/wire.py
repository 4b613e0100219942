"""What crosses the A2A wire: content parts, the data part of a request, of an answer.

The server asks with request parts and reads answer parts; the remote agent reads request
parts and sends answer parts. Both live here, so two adk-temporal apps speak the same
shapes. A data part's numbers travel as doubles (``google.protobuf.Value``); integral ones
are read back as integers, so a call's arguments keep their digest across the wire.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from a2a.types import Part, TaskState
from google.genai import types
from google.protobuf import json_format, struct_pb2
from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "ANSWER_KEY",
    "INTERRUPTED",
    "REQUEST_KEY",
    "TERMINAL",
    "AnswerPart",
    "AskedRequest",
    "a2a_parts",
    "answer_parts",
    "asked_requests",
    "data_of",
    "data_part",
    "genai_parts",
    "plain",
    "text_of",
]

REQUEST_KEY = "adk_request"
"""The key of a data part describing one open request of a paused task."""
ANSWER_KEY = "adk_answer"
"""The key of a data part answering one open request."""

INTERRUPTED = frozenset({TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED})
"""The states of a task that waits for its client's next message."""
TERMINAL = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)
"""The states of a task that ended: it takes no more messages and cannot be cancelled."""


def plain(value: Any) -> Any:
    """``value`` with integral floats as integers (protobuf's ``Value`` has only doubles)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def data_part(value: Any) -> Part:
    """A data part holding the JSON value ``value``."""
    return Part(data=json_format.ParseDict(value, struct_pb2.Value()))


def data_of(part: Part) -> Any:
    """A data part's value (integral numbers as integers); ``None`` for other parts."""
    if not part.HasField("data"):
        return None
    return plain(json_format.MessageToDict(part.data))


def text_of(parts: Iterable[Part]) -> str:
    """The parts' text, joined by new lines."""
    return "\n".join(p.text for p in parts if p.HasField("text") and p.text)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def a2a_parts(content: types.Content | None) -> list[Part]:
    """Our content's parts as A2A parts: text, files (bytes or a URI) and function calls
    and responses as data parts."""
    found: list[Part] = []
    for part in content.parts or [] if content is not None else []:
        if part.thought:
            continue
        if part.text:
            found.append(Part(text=part.text))
        elif part.inline_data is not None and part.inline_data.data is not None:
            blob = part.inline_data
            found.append(
                Part(
                    raw=blob.data,
                    media_type=blob.mime_type or "",
                    filename=blob.display_name or "",
                )
            )
        elif part.file_data is not None and part.file_data.file_uri:
            found.append(
                Part(url=part.file_data.file_uri, media_type=part.file_data.mime_type or "")
            )
        elif part.function_call is not None:
            call = part.function_call
            found.append(data_part({"function_call": {"name": call.name, "args": call.args}}))
        elif part.function_response is not None:
            reply = part.function_response
            found.append(
                data_part({"function_response": {"name": reply.name, "response": reply.response}})
            )
    return found


def genai_parts(parts: Iterable[Part]) -> list[types.Part]:
    """A2A parts as our content's: text, bytes as inline data, URLs as file data, data as
    its compact JSON text (what a model reads)."""
    found: list[types.Part] = []
    for part in parts:
        if part.HasField("text"):
            found.append(types.Part(text=part.text))
        elif part.HasField("raw"):
            blob = types.Blob(
                data=part.raw,
                mime_type=part.media_type or "application/octet-stream",
                display_name=part.filename or None,
            )
            found.append(types.Part(inline_data=blob))
        elif part.HasField("url"):
            file = types.FileData(file_uri=part.url, mime_type=part.media_type or None)
            found.append(types.Part(file_data=file))
        elif part.HasField("data"):
            found.append(types.Part(text=_compact(data_of(part))))
    return found


class AskedRequest(BaseModel):
    """One open request of a paused task, as its data part describes it.

    ``answer_schema`` is the JSON schema of the data part that answers it: an object under
    :data:`ANSWER_KEY`. A confirmation's answer carries ``call_digest``, which binds the
    decision to the call shown here.
    """

    model_config = ConfigDict(extra="ignore")

    kind: Literal["confirmation", "input"]
    request_id: str
    function_call_id: str = ""
    tool: str = ""
    args: dict[str, Any] = Field(default_factory=dict)
    agent: str = ""
    hint: str = ""
    payload: Any = None
    call_digest: str = ""
    message: str = ""
    input_schema: dict[str, Any] | None = None
    credential: bool = False
    """The request asks for credentials (the task is ``auth-required``)."""
    expires_at: float | None = None
    answer_schema: dict[str, Any] = Field(default_factory=dict)

    def question(self) -> str:
        """The request in words: the hint of a confirmation, the message of an input."""
        return self.hint if self.kind == "confirmation" else self.message

    def part(self) -> Part:
        """The data part describing the request (its answer schema filled in)."""
        doc = self.model_dump(mode="json")
        doc["answer_schema"] = self.answer_schema or _answer_schema(self)
        return data_part({REQUEST_KEY: doc})


def _answer_schema(request: AskedRequest) -> dict[str, Any]:
    """The schema of the data part answering ``request``."""
    answer: dict[str, Any]
    if request.kind == "confirmation":
        answer = {
            "type": "object",
            "properties": {
                "request_id": {"const": request.request_id},
                "confirmed": {"type": "boolean"},
                "payload": {},
                "call_digest": {"const": request.call_digest},
            },
            "required": ["confirmed", "call_digest"],
        }
    else:
        answer = {
            "type": "object",
            "properties": {
                "request_id": {"const": request.request_id},
                "input": request.input_schema or {},
            },
            "required": ["input"],
        }
    return {"type": "object", "properties": {ANSWER_KEY: answer}, "required": [ANSWER_KEY]}


def asked_requests(parts: Iterable[Part]) -> list[AskedRequest]:
    """The requests the parts describe; a malformed description is left out."""
    found: list[AskedRequest] = []
    for part in parts:
        value = data_of(part)
        if not isinstance(value, dict) or not isinstance(value.get(REQUEST_KEY), dict):
            continue
        try:
            found.append(AskedRequest.model_validate(value[REQUEST_KEY]))
        except ValidationError:
            continue
    return found


class AnswerPart(BaseModel):
    """One answer, as a data part under :data:`ANSWER_KEY` carries it.

    A confirmation's answer has ``confirmed`` (and ``call_digest``, ``payload``); an input's
    has ``input`` — present even when ``null``, which is a value. ``request_id`` may be left
    out when the task has one open request.
    """

    model_config = ConfigDict(extra="forbid")

    request_id: str | None = None
    confirmed: bool | None = None
    payload: Any = None
    call_digest: str | None = None
    input: Any = None

    @property
    def has_input(self) -> bool:
        """Whether the answer gives an input (``null`` included)."""
        return "input" in self.model_fields_set

    def part(self) -> Part:
        """The answer as a data part."""
        return data_part({ANSWER_KEY: self.model_dump(mode="json", exclude_unset=True)})


def answer_parts(parts: Sequence[Part]) -> list[AnswerPart]:
    """The answers among ``parts``.

    Raises:
        ValueError: A part under :data:`ANSWER_KEY` is not an answer (named in the message).
    """
    found: list[AnswerPart] = []
    for index, part in enumerate(parts):
        value = data_of(part)
        if not isinstance(value, dict) or ANSWER_KEY not in value:
            continue
        try:
            found.append(AnswerPart.model_validate(value[ANSWER_KEY]))
        except ValidationError as err:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or ANSWER_KEY}: {e['msg']}"
                for e in err.errors()
            )
            raise ValueError(f"part {index} is not an answer ({problems})") from None
    return found
