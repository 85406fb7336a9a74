"""deploy/mosquitto loads with no warning.

A warning at start-up is a directive mosquitto did not take as written (an ACL line it cannot
parse, a pattern without ``%u`` or ``%c``, an option it ignores): the broker would run, but not
as deploy/mosquitto/README.md says ("Warnings"). The shipped configuration and ACL start a real
broker, and its log is read. Nothing may be flagged but mosquitto's warning that it runs as
root, when the tests do (the service runs as ``mosquitto``).
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from support.drivers.shipped_broker import (
    Credentials,
    connect,
    credentials_fixture,  # noqa: F401 - registers the fixture
    start_shipped,
    start_warnings,
)

if TYPE_CHECKING:
    from pathlib import Path


def test_the_shipped_configuration_and_acl_load_without_warnings(
    credentials: Credentials, tmp_path: Path
) -> None:
    broker = start_shipped(tmp_path / "broker", credentials)

    async def answered() -> None:
        async with connect(broker, credentials, "monitor", "monitor-log"):
            pass

    # A client answered: the broker is in its main loop, past installing its signal handlers
    # (a SIGTERM before that ends it without a word, and the log would have no "terminating").
    asyncio.run(answered())
    broker.stop()  # then the log is whole: start-up to shutdown, nothing still being written
    log = broker.log()
    assert "Config loaded from" in log, log
    assert "terminating" in log, log
    assert "Opening ipv4 listen socket" in log, log  # the shipped listener, on 127.0.0.1 here
    as_root = ["Warning: Mosquitto should not be run as root/administrator."]
    assert start_warnings(log) == (as_root if os.geteuid() == 0 else [])
