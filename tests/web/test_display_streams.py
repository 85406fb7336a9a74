"""The display's cap on live streams, and the unit's open-file limit.

docs/faults.md, "Too many display streams". The real daemon (``python -m controller run``, a
simulated table playing every 50 ms) is asked for 300 ``/events`` streams at once, with
``[web] max_streams = 250``:

* 250 stream; 50 are answered 503 with a ``Retry-After`` and a body naming the cap, counted in
  ``jackpotd_display_streams_refused_total`` and logged once (not once per refusal);
* ``/healthz`` and ``/metrics`` answer within :data:`ANSWER_S`, during the burst and with the
  250 open, and every open stream goes on delivering meters journaled after the refusals;
* streams their clients close free their places at once, for new ones;
* with no stream left, the daemon stops cleanly.

A page refused at the cap (headless Chromium, its clock driven by the test) tries again after
``Retry-After`` and streams. The cap is checked when the configuration loads, and
systemd/jackpotd.service raises ``LimitNOFILE`` well above the largest cap.

Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import aiohttp
import pytest
from playwright.async_api import async_playwright
from support.runtime.controller_keys import KEY_LINE, write_controller_key
from support.runtime.floor import approved_site

from controller.config.load import ConfigError, parse_config
from controller.config.schema import MAX_STREAMS
from controller.web.display import RETRY_AFTER_S

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "jackpotd.service"
SAMPLE = ROOT / "deploy" / "jackpotd.toml"
WAIT_S = 30.0
"""The bound on any one wait; a passing run takes a small fraction of it."""
ANSWER_S = 2.0
"""How long /healthz and /metrics may take under load; they answer in milliseconds."""
CONNECTIONS = 300
CAP = 250


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def write_config(folder: Path, port: int, max_streams: int) -> Path:
    config = folder / "jackpotd.toml"
    write_controller_key(folder)
    config.write_text(
        '[controller]\nsite = "streams"\nid = "streams"\njournal = "journal.db"\n'
        f"{KEY_LINE}\n"
        '[[pools]]\nid = "P1"\npaytable = "progressive-1"\n\n'
        '[[tables]]\nid = "T1"\ntransport = "simulator"\nbonus = "fortune-1"\n'
        'progressive = "progressive-1"\npool = "P1"\n\n'
        f"[web]\nport = {port}\nmax_streams = {max_streams}\n\n"
        "[simulator]\nround_interval_s = 0.05\n"
    )
    approved_site(config)
    return config


class Daemon:
    """``jackpotd run`` in a child process, its log in a file."""

    def __init__(self, folder: Path, max_streams: int) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log = folder / "jackpotd.log"
        config = write_config(folder, self.port, max_streams)
        with self.log.open("w") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "controller", "run", "--config", str(config)],
                stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT,
            )  # fmt: skip
        assert self.process.stdout is not None
        assert "meter display" in self.process.stdout.readline(), self.log.read_text()

    def stop(self) -> int:
        """SIGTERM; the exit status (killed after WAIT_S)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.communicate(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate(timeout=WAIT_S)
            pytest.fail(f"the daemon did not stop within {WAIT_S:g} s")
        return self.process.returncode


@pytest.fixture
def streams_daemon(tmp_path: Path) -> Iterator[Daemon]:
    running = Daemon(tmp_path, CAP)
    try:
        yield running
    finally:
        if running.process.poll() is None:
            running.process.kill()
            running.process.communicate(timeout=WAIT_S)


async def answered(session: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    """A GET answered within ANSWER_S: its status and body."""
    started = time.monotonic()
    try:
        async with asyncio.timeout(ANSWER_S), session.get(url) as response:
            return response.status, await response.text()
    except TimeoutError:
        pytest.fail(
            f"{url} did not answer within {ANSWER_S:g} s ({time.monotonic() - started:.2f})"
        )


def sample(metrics: str, name: str) -> float:
    found = re.search(rf"^{name} (\S+)$", metrics, re.MULTILINE)
    assert found is not None, name
    return float(found.group(1))


async def until(condition: Callable[[], Awaitable[bool]], what: str) -> None:
    """Wait for an async condition, bounded by WAIT_S."""

    async def wait() -> None:
        while not await condition():
            await asyncio.sleep(0.05)

    try:
        async with asyncio.timeout(WAIT_S):
            await wait()
    except TimeoutError:
        pytest.fail(f"timed out after {WAIT_S:g} s waiting for {what}")


async def next_meter_seq(stream: aiohttp.ClientResponse) -> int:
    """The journal row of the next meter update the stream delivers."""
    while True:
        block = (await stream.content.readuntil(b"\n\n")).decode()
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if fields.get("event") == "meter":
            return int(json.loads(fields["data"])["seq"])


async def streamed_past(stream: aiohttp.ClientResponse, mark: int) -> None:
    while await next_meter_seq(stream) <= mark:
        pass


@pytest.mark.slow
async def test_300_event_streams_leave_healthz_responsive_and_those_beyond_the_cap_get_503(
    streams_daemon: Daemon,
) -> None:
    url = streams_daemon.url
    connector = aiohttp.TCPConnector(limit=0)  # one connection per stream, none pooled
    async with (
        aiohttp.ClientSession(connector=connector) as streams_session,
        aiohttp.ClientSession() as probe,
    ):

        async def health_during_the_burst() -> list[int]:
            return [(await answered(probe, url + "healthz"))[0] for _ in range(5)]

        async def burst() -> list[aiohttp.ClientResponse]:
            opening = (streams_session.get(url + "events") for _ in range(CONNECTIONS))
            return await asyncio.gather(*opening)

        async with asyncio.timeout(WAIT_S):
            responses, during = await asyncio.gather(burst(), health_during_the_burst())
        assert during == [200] * 5
        open_streams = [r for r in responses if r.status == 200]
        refused = [r for r in responses if r.status != 200]
        assert len(open_streams) == CAP
        assert {r.status for r in refused} == {503}
        assert len(refused) == CONNECTIONS - CAP
        for response in refused:
            assert response.headers["Retry-After"] == str(RETRY_AFTER_S)
            body = await response.text()
            assert f"{CAP} of {CAP} open" in body
            assert "[web] max_streams" in body
        for stream in open_streams:
            assert stream.headers["Content-Type"] == "text/event-stream"

        # With 250 streams open: the ops endpoints answer at once, and count them.
        for _ in range(5):
            assert (await answered(probe, url + "healthz"))[0] == 200
        status, metrics = await answered(probe, url + "metrics")
        assert status == 200
        assert sample(metrics, "jackpotd_display_streams") == CAP
        assert sample(metrics, "jackpotd_display_streams_max") == CAP
        assert sample(metrics, "jackpotd_display_streams_refused_total") == CONNECTIONS - CAP

        # Every open stream still streams: meters journaled after the refusals arrive on each.
        mark = json.loads((await answered(probe, url + "api/state"))[1])["controller"]["rows"]
        async with asyncio.timeout(WAIT_S):
            await asyncio.gather(*(streamed_past(stream, mark) for stream in open_streams))

        # Streams closed by their clients free their places at once.
        for stream in open_streams[:10]:
            stream.close()

        async def released() -> bool:
            metrics = (await answered(probe, url + "metrics"))[1]
            return sample(metrics, "jackpotd_display_streams") == CAP - 10

        await until(released, "ten closed streams to free their places")
        again = [await streams_session.get(url + "events") for _ in range(11)]
        assert [r.status for r in again] == [200] * 10 + [503]
        async with asyncio.timeout(WAIT_S):
            await asyncio.gather(*(streamed_past(stream, mark) for stream in again[:10]))

        for stream in [*open_streams, *again]:
            stream.close()

        async def all_closed() -> bool:
            metrics = (await answered(probe, url + "metrics"))[1]
            return sample(metrics, "jackpotd_display_streams") == 0

        await until(all_closed, "every stream to close")
        metrics = (await answered(probe, url + "metrics"))[1]
        assert sample(metrics, "jackpotd_display_streams_refused_total") == CONNECTIONS - CAP + 1
    assert streams_daemon.stop() == 0
    log = streams_daemon.log.read_text()
    # One warning for the whole episode at the cap, not one per refused stream.
    assert log.count("max_streams cap: further streams are refused") == 1, log


@pytest.mark.browser
async def test_a_page_refused_at_the_cap_tries_again_later_and_streams(tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium is not None, "chromium is missing: make test installs it"
    running = Daemon(tmp_path, max_streams=1)
    url = running.url
    try:
        async with aiohttp.ClientSession() as probe:

            async def metric(name: str) -> float:
                return sample((await answered(probe, url + "metrics"))[1], name)

            holder = await probe.get(url + "events")
            assert holder.status == 200
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(
                    executable_path=chromium, args=["--no-sandbox", "--disable-gpu"]
                )
                page = await browser.new_page()
                await page.clock.install()
                await page.goto(url)

                async def page_refused() -> bool:
                    return await metric("jackpotd_display_streams_refused_total") == 1

                await until(page_refused, "the page's stream to be refused")
                holder.close()

                async def place_free() -> bool:
                    return await metric("jackpotd_display_streams") == 0

                await until(place_free, "the held stream to close")
                # The page waits Retry-After before trying again: jump the page's clock.
                await page.clock.fast_forward(RETRY_AFTER_S * 1000 + 1000)

                async def page_streams() -> bool:
                    return await metric("jackpotd_display_streams") == 1

                await until(page_streams, "the page to open its stream again")
                meter = page.locator(".pool .meter").first
                first = await meter.inner_text()
                await page.wait_for_function(
                    "first => document.querySelector('.pool .meter').textContent !== first",
                    arg=first,
                    timeout=WAIT_S * 1000,
                )
                assert await metric("jackpotd_display_streams_refused_total") == 1
                await browser.close()
    finally:
        assert running.stop() == 0


def test_max_streams_defaults_to_64_and_is_checked_when_the_configuration_loads() -> None:
    sample_text = SAMPLE.read_text(encoding="utf-8")
    assert parse_config(sample_text, str(SAMPLE), SAMPLE.parent).web.max_streams == 64
    without = sample_text.replace("max_streams = 64", "")
    assert parse_config(without, str(SAMPLE), SAMPLE.parent).web.max_streams == 64
    for value, reason in (("0", ">= 1"), (str(MAX_STREAMS + 1), f"<= {MAX_STREAMS}")):
        text = sample_text.replace("max_streams = 64", f"max_streams = {value}")
        with pytest.raises(ConfigError) as refused:
            parse_config(text, str(SAMPLE), SAMPLE.parent)
        assert refused.value.key == "web.max_streams"
        assert reason in refused.value.reason
        assert str(refused.value).startswith(f"{SAMPLE}: web.max_streams: ")


def test_the_unit_allows_far_more_open_files_than_the_largest_stream_cap() -> None:
    found = re.findall(r"^LimitNOFILE=(\d+)$", UNIT.read_text(), re.MULTILINE)
    assert len(found) == 1
    # Each stream is a socket; the journal, the broker, serial ports and connections being
    # refused need theirs too.
    assert int(found[0]) >= 2 * MAX_STREAMS
