"""The console opens artifacts: images shown inline, scriptable files only downloaded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from google.genai import types

from adk_temporal.client import AdkClient
from adk_temporal.ids import SessionKey
from adk_temporal.web.stored import ArtifactContent, artifact_content

from .test_console_templates import _Adk, _client, _Gateway

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
SESSION = "/console/apps/weather/users/u/sessions/s"


@dataclass
class _Files(_Gateway):
    """A gateway whose artifact ``chart.png`` is a PNG and ``page.svg`` an SVG with script."""

    async def artifact(self, ids: SessionKey, name: str, version: int) -> ArtifactContent:
        """The named file's version 3, whatever version was asked."""
        mime = "image/png" if name.endswith(".png") else "image/svg+xml"
        data = PNG if name.endswith(".png") else b"<svg onload=alert(1)/>"
        return artifact_content(name, 3, types.Part.from_bytes(data=data, mime_type=mime))


def test_an_image_opens_inline_and_a_script_capable_file_is_only_downloaded() -> None:
    """A PNG's page shows it as an image served inline; an SVG's page offers only the
    download, and its bytes come as a sandboxed, unsniffed attachment."""
    client = _client(_Files(adk=cast(AdkClient, _Adk()), value="v"))
    page = client.get(f"{SESSION}/artifacts/chart.png?version=3")
    assert page.status_code == 200
    assert f'<img class="artifact" src="{SESSION}/artifacts/chart.png/file?version=3"' in page.text
    image = client.get(f"{SESSION}/artifacts/chart.png/file?version=3")
    assert image.content == PNG and image.headers["content-type"] == "image/png"
    assert image.headers["content-disposition"].startswith("inline")
    download = client.get(f"{SESSION}/artifacts/chart.png/file?version=3&download=1")
    assert download.headers["content-disposition"].startswith("attachment")

    svg_page = client.get(f"{SESSION}/artifacts/page.svg")
    assert "<img" not in svg_page.text and "cannot be shown here" in svg_page.text
    svg = client.get(f"{SESSION}/artifacts/page.svg/file?version=3")
    assert svg.headers["content-disposition"].startswith("attachment")
    assert svg.headers["x-content-type-options"] == "nosniff"
    assert svg.headers["content-security-policy"].startswith("sandbox")
    bad = client.get(f"{SESSION}/artifacts/page.svg?version=latest")
    assert bad.status_code == 422
