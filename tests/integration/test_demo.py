"""`adk-temporal demo`: the seed scenario end to end in a subprocess, offline."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import threading

import pytest

from adk_temporal.ports import free_port

from ..commands import adk_command, offline_env

pytestmark = pytest.mark.integration


def test_demo_runs_the_seed_scenario_and_exits_0() -> None:
    """Forecast state, the paused purchase with its commands, report v1 and v2, UI links."""
    result = subprocess.run(
        [*adk_command(), "demo"],
        capture_output=True,
        text=True,
        timeout=60,
        env=offline_env(),
        stdin=subprocess.DEVNULL,
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "Traceback" not in result.stderr
    assert 'state last_city = "Hangzhou"' in out
    # Each streamed reply is printed once and whole, after the tool response it sums up.
    for response, reply in [
        ("← get_weather ", r"The weather in Hangzhou is [^\n]+, low -?\d+°C\."),
        ('← buy_weather_report {"status": "purchased"', r"saved as report\.txt \(version 1\)\."),
        ("← update_report ", r"The report for Hangzhou is updated \(version 2\)\."),
    ]:
        [line] = [m.start() for m in re.finditer(rf"weather_agent +[^\n]*{reply}\n", out)]
        assert out.index(response) < line, out
    assert "WARN" not in out + result.stderr
    assert "waiting for approval of buy_weather_report(city='Hangzhou')" in out
    assert "hint     Buy the weather report for Hangzhou for $2.00?" in out
    assert 'payload  {"city": "Hangzhou", "price_usd": 2.0}' in out
    address = re.search(r"Temporal on (127\.0\.0\.1:\d+)", out)
    assert address is not None
    approve = re.search(
        r"approve  adk-temporal confirm adk/weather/demo-user/demo-\w+ adk-[0-9a-f-]+ --approve "
        rf"--address {re.escape(address.group(1))}",
        out,
    )
    assert approve is not None
    assert '--name adk_confirm --input \'{"confirmation_id": "adk-' in out
    assert re.search(r"report\.txt v1 +text/plain", out)
    assert re.search(r"report\.txt v2 +text/plain", out)
    assert "│ Advice: take an umbrella" in out
    assert re.search(r"user:purchases\.json v1 +application/json", out)
    assert 'last_report_city = "Hangzhou"' in out
    ui = re.search(r"Temporal UI\n  (http://127\.0\.0\.1:\d+)\n", out)
    assert ui is not None
    assert (
        f"{ui.group(1)}/namespaces/default/workflows?query=AdkStatus%3D%22awaiting_confirmation"
        in out
    )
    assert out.rstrip().endswith("stopping worker and server")


def test_demo_keep_serves_until_interrupted() -> None:
    """`demo --keep` keeps the server up after the scenario; Ctrl-C stops it and exits 0."""
    port = free_port()
    process = subprocess.Popen(
        [*adk_command(), "demo", "--keep", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=offline_env(),
    )
    # Reading lines blocks; a demo that hangs is killed rather than hanging the suite.
    watchdog = threading.Timer(60, process.kill)
    watchdog.start()
    try:
        assert process.stdout is not None
        lines: list[str] = []
        for line in process.stdout:
            lines.append(line)
            if "Ctrl-C stops them." in line:
                break
        assert any(f"adk-temporal pending --address 127.0.0.1:{port}" in s for s in lines)
        pending = subprocess.run(
            [*adk_command(), "pending", "--address", f"127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            timeout=30,
            env=offline_env(),
        )
        assert pending.returncode == 0, pending.stderr
        assert "no open requests" in pending.stdout
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=30)
        assert process.returncode == 0, "".join(lines) + rest
        assert "stopping worker and server" in rest
        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            pass  # the dev server is gone with the demo
    finally:
        watchdog.cancel()
        process.kill()
        process.wait()
