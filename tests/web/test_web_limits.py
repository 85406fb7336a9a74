"""The web port's limits: its ``[web]`` keys, and its cap sized under the open-file limit.

``max_connections``, ``header_timeout_s``, ``idle_timeout_s`` and ``send_timeout_s`` have
their defaults and are checked when the configuration loads (each error names the file, the
key and the reason); the cap in force is ``max_connections`` or the open-file limit less
:data:`FD_HEADROOM`, whichever is lower; and ``jackpotd run`` under a limit that leaves no
place beyond the streams refuses to start with one line saying so (docs/operations.md, "The
web port").
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from support.runtime.floor import ROOT, approved_site, free_port, write_config

from controller.config.load import ConfigError, parse_config
from controller.config.schema import MAX_CONNECTIONS, WebSettings
from controller.web.limits import FD_HEADROOM, FileLimitError, WebLimits

if TYPE_CHECKING:
    from pathlib import Path

SAMPLE = ROOT / "deploy" / "jackpotd.toml"


WEB_KEYS = ("max_connections", "header_timeout_s", "idle_timeout_s", "send_timeout_s")


def with_web(keys: str) -> str:
    """The sample configuration without its web port keys, and with ``keys`` in ``[web]``."""
    text = SAMPLE.read_text(encoding="utf-8")
    text = re.sub(rf"^(?:{'|'.join(WEB_KEYS)}) = .*\n", "", text, flags=re.MULTILINE)
    return text.replace("[web]\n", f"[web]\n{keys}\n", 1)


def test_the_web_port_keys_have_their_defaults_and_the_sample_writes_them() -> None:
    assert (
        parse_config(with_web(""), str(SAMPLE), SAMPLE.parent).web
        == parse_config(SAMPLE.read_text(encoding="utf-8"), str(SAMPLE), SAMPLE.parent).web
    )
    web = parse_config(with_web(""), str(SAMPLE), SAMPLE.parent).web
    assert (web.max_connections, web.header_timeout_s) == (1024, 10.0)
    assert (web.idle_timeout_s, web.send_timeout_s) == (30.0, 30.0)


@pytest.mark.parametrize(
    ("keys", "key", "reason"),
    [
        ("max_connections = 1", "web.max_connections", ">= 2"),
        (
            f"max_connections = {MAX_CONNECTIONS + 1}",
            "web.max_connections",
            f"<= {MAX_CONNECTIONS}",
        ),
        ("max_connections = 64", "web.max_connections", "must be above max_streams (64)"),
        ("header_timeout_s = 0", "web.header_timeout_s", "> 0"),
        ("idle_timeout_s = -1", "web.idle_timeout_s", "> 0"),
        ("send_timeout_s = 3601", "web.send_timeout_s", "<= 3600"),
        ('header_timeout_s = "10"', "web.header_timeout_s", "Expected `float`"),
    ],
)
def test_a_bad_web_port_key_is_refused_naming_file_key_and_reason(
    keys: str, key: str, reason: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config(with_web(keys), str(SAMPLE), SAMPLE.parent)
    assert refused.value.key == key
    assert reason in refused.value.reason
    assert str(refused.value).startswith(f"{SAMPLE}: {key}: ")


def test_the_cap_is_max_connections_under_a_generous_open_file_limit() -> None:
    assert WebLimits.of(WebSettings(max_connections=500), file_limit=8192).max_connections == 500
    assert WebLimits.of(WebSettings(max_connections=500)).max_connections <= 500


def test_the_cap_is_the_open_file_limit_less_the_headroom_when_that_is_lower() -> None:
    limits = WebLimits.of(WebSettings(max_connections=4096), file_limit=1024)
    assert limits.max_connections == 1024 - FD_HEADROOM


def test_a_limit_leaving_no_place_beyond_the_streams_is_refused() -> None:
    with pytest.raises(FileLimitError) as refused:
        WebLimits.of(WebSettings(max_streams=64), file_limit=FD_HEADROOM + 64)
    assert "RLIMIT_NOFILE 320" in str(refused.value)
    assert "[web] max_streams (64)" in str(refused.value)


def test_jackpotd_run_under_too_low_an_open_file_limit_stops_with_one_line(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, "limits", {}, free_port())
    with config.open("a") as more:
        more.write('[[tables]]\nid = "t1"\ntransport = "simulator"\nbonus = "fortune-1"\n')
    approved_site(config)
    limit = FD_HEADROOM + 32
    ran = subprocess.run(
        ["prlimit", f"--nofile={limit}:{limit}",
         sys.executable, "-m", "controller", "run", "--config", str(config)],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )  # fmt: skip
    assert ran.returncode == 1, ran.stderr
    errors = [line for line in ran.stderr.splitlines() if "RLIMIT_NOFILE" in line]
    assert len(errors) == 1, ran.stderr
    assert f"RLIMIT_NOFILE {limit}" in errors[0]
    assert "raise LimitNOFILE or lower max_streams" in errors[0]
