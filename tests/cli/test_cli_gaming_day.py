"""A date given to ``report`` or ``hits`` is the site's gaming day, in its time zone.

docs/operations.md, "7. Reconcile the meters": ``[controller] gaming_day_start`` ("HH:MM") in
``[controller] time_zone`` (IANA) begins each gaming day; a bare date given to ``report
--from/--to`` (or ``hits --since``) is that day, where it was the UTC day. Across a change of
daylight saving time the day is 25 hours (2026-10-31 in New York) or 23 (2026-03-07); without
either key a date is still the UTC day. A bad value is refused naming the file, the key and
why. Each case runs the real CLI on a real configuration file and journal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.ledger_journal.sqlite import Journal

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """
[controller]
site = "riverside"
id = "pit-1"
journal = "journal.db"
{gaming_day}
[[pools]]
id = "fortune-progressive"
paytable = "progressive-1"

[simulator]
seed = 1

[[tables]]
id = "T1"
transport = "simulator"
progressive = "progressive-1"
pool = "fortune-progressive"
"""
NO_ZONE = (
    " is not a time zone of the system's database (an IANA name such as America/New_York or "
    "Europe/Paris)"
)
NEW_YORK = 'gaming_day_start = "06:00"\ntime_zone = "America/New_York"\n'


def jackpotd(folder: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    # TZ=UTC: the table shows times in the machine's zone; here, the bounds in UTC.
    return subprocess.run(
        [sys.executable, "-m", "controller", *argv], cwd=folder, capture_output=True,
        text=True, timeout=60, check=False,
        env=os.environ | {"PYTHONPATH": str(ROOT), "TZ": "UTC"},
    )  # fmt: skip


def site(folder: Path, gaming_day: str) -> Path:
    config = folder / "jackpotd.toml"
    config.write_text(CONFIG.format(gaming_day=gaming_day), encoding="utf-8")
    Journal(folder / "journal.db").close()
    return config


@pytest.mark.parametrize(
    ("day", "bounds"),
    [
        # 06:00 EDT (UTC-4) to 06:00 EST (UTC-5) the next morning: 25 hours.
        ("2026-10-31", "from 2026-10-31 10:00:00 UTC to 2026-11-01 10:59:59 UTC"),
        # 06:00 EST to 06:00 EDT: 23 hours.
        ("2026-03-07", "from 2026-03-07 11:00:00 UTC to 2026-03-08 09:59:59 UTC"),
        ("2026-07-01", "from 2026-07-01 10:00:00 UTC to 2026-07-02 09:59:59 UTC"),
    ],
)
def test_a_date_is_the_gaming_day_in_the_sites_time_zone(
    tmp_path: Path, day: str, bounds: str
) -> None:
    config = site(tmp_path, NEW_YORK)
    done = jackpotd(tmp_path, "report", "--config", str(config), "--from", day, "--to", day)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"Reconciliation {bounds}"


def test_without_the_keys_a_date_is_the_utc_day(tmp_path: Path) -> None:
    config = site(tmp_path, "")
    done = jackpotd(tmp_path, "report", "--config", str(config), "--from", "2026-10-31",
                    "--to", "2026-10-31")  # fmt: skip
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first == "Reconciliation from 2026-10-31 00:00:00 UTC to 2026-10-31 23:59:59 UTC"


def test_hits_takes_a_date_under_the_sites_gaming_day(tmp_path: Path) -> None:
    config = site(tmp_path, NEW_YORK)
    done = jackpotd(tmp_path, "hits", "--config", str(config), "--since", "2026-10-31")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("line", "key", "why"),
    [
        ('gaming_day_start = "6am"\n', "controller.gaming_day_start",
         "'6am' is not a time of day as HH:MM (00:00 to 23:59), e.g. 06:00"),
        ('gaming_day_start = "24:00"\n', "controller.gaming_day_start",
         "'24:00' is not a time of day as HH:MM (00:00 to 23:59), e.g. 06:00"),
        ('time_zone = "Mars/Olympus"\n', "controller.time_zone", "'Mars/Olympus'" + NO_ZONE),
        ('time_zone = "../../etc/passwd"\n', "controller.time_zone",
         "'../../etc/passwd'" + NO_ZONE),
    ],
)  # fmt: skip
def test_a_bad_value_is_refused_naming_the_file_the_key_and_why(
    tmp_path: Path, line: str, key: str, why: str
) -> None:
    config = site(tmp_path, line)
    done = jackpotd(tmp_path, "config", "check", str(config))
    assert done.returncode == 1
    assert done.stderr.strip() == f"jackpotd: {config}: {key}: {why}"
