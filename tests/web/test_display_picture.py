"""The kiosk's picture of the display: the documented headless Chromium command returns with a PNG.

docs/operations.md, "Pictures of the display": kiosk and monitoring scripts run
``chromium --headless --screenshot=display.png --virtual-time-budget=5000 <url>``. The budget
is virtual time, which stands still while a request is open; the page's event stream never
ends, so a page that opened it at once held the command for ever. The command is taken from
the page and run as written against the real daemon's display, bounded; it must write a PNG of
the page and return. Two changes to the words, both said in the page: the display's own URL
for ``http://127.0.0.1:8080/`` (the test's daemon listens on a free port), and Chromium's
``--no-sandbox`` when the test runs as root (Chromium refuses to start as root without it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import signal
import struct
from pathlib import Path
from typing import Final

import pytest
from support.runtime.daemon import daemon
from support.web.display_rig import chromium, demo_floor

pytestmark = pytest.mark.browser

OPERATIONS: Final = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
DOCUMENTED_URL: Final = "http://127.0.0.1:8080/"
RETURNS_S: Final = 60.0
"""The bound on the command (it returns in about two seconds; before, never)."""
PNG: Final = b"\x89PNG\r\n\x1a\n"


def documented_command() -> list[str]:
    """The ``chromium`` line of the section's shell block, split as a shell splits it."""
    text = OPERATIONS.read_text(encoding="utf-8")
    section = text.split("#### Pictures of the display", 1)[1].split("\n#", 1)[0]
    (block,) = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    (line,) = [line for line in block.splitlines() if line.startswith("chromium ")]
    return shlex.split(line)


async def test_the_documented_headless_chromium_screenshot_returns_with_a_picture(
    tmp_path: Path,
) -> None:
    words = documented_command()
    assert "--headless" in words
    assert "--virtual-time-budget=5000" in words
    assert words[-1] == DOCUMENTED_URL
    async with daemon(demo_floor(tmp_path)) as running:
        command = [chromium(), *words[1:-1], running.url]
        if os.geteuid() == 0:
            command.insert(1, "--no-sandbox")
        # Its own HOME (Chromium's profile) and session (its helpers end with it if it hangs).
        shot = await asyncio.create_subprocess_exec(
            *command,
            cwd=tmp_path,
            env={**os.environ, "HOME": str(tmp_path)},
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            async with asyncio.timeout(RETURNS_S):
                returned = await shot.wait()
        except TimeoutError:
            pytest.fail(f"{shlex.join(command)} did not return within {RETURNS_S:g} s")
        finally:
            if shot.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(shot.pid, signal.SIGKILL)
                await shot.wait()
        assert returned == 0
        metrics = running.runtime.metrics
        assert metrics is not None
        assert metrics.streams.open == 0  # it never opened the stream that would hold it
    picture = (tmp_path / "display.png").read_bytes()
    assert picture.startswith(PNG)
    width, height = struct.unpack(">II", picture[16:24])  # the IHDR chunk
    assert width >= 640  # headless Chromium's window (less its scroll bar)
    assert height >= 400
    assert len(picture) > 10_000  # the page drawn, not a blank window
