"""Wager limits in the configuration (docs/rules.md § 8): every odds spot gets a maximum.

``minimum_wager`` and ``maximum_wager`` apply to each odds spot a table offers, and
``wager_limits`` overrides them per spot; the progressive spot takes only its paytable's
denomination. Every error names the file, the key and the reason. The limits travel in the
``table-configured`` event, so a journal whose table was configured before them is
reconfigured at the next start.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from support.cli.cli_runs import check
from support.config_files import BASE

from controller.config.changes import config_events
from controller.config.load import Config, ConfigError, load_config
from controller.events import SpotLimits
from controller.ledger.apply import LedgerState, apply
from controller.rules.spots import Spot

SAMPLE = Path(__file__).resolve().parents[2] / "deploy" / "jackpotd.toml"
AT = "2025-01-01T00:00:00.000Z"


def load(folder: Path, extra: str = "") -> Config:
    path = folder / "jackpotd.toml"
    path.write_text(BASE + extra, encoding="utf-8")
    return load_config(path)


def limits_of(folder: Path, extra: str = "") -> dict[str, SpotLimits]:
    config = load(folder, extra)
    event = config.tables[0].event
    assert not isinstance(event.wager_limits, msgspec.UnsetType)
    return dict(event.wager_limits)


def test_every_odds_spot_has_a_maximum_by_default(tmp_path: Path) -> None:
    assert limits_of(tmp_path) == {"bonus": SpotLimits(100, 100_000)}


def test_the_sample_sets_a_maximum_and_a_per_spot_override() -> None:
    config = load_config(SAMPLE)
    limits = {table.table_id: table.event.wager_limits for table in config.tables}
    assert limits == {
        "t1": {"bonus": SpotLimits(500, 10_000)},  # maximum_wager $500, bonus override $100
        "t2": {"bonus": SpotLimits(500, 100_000)},
        "t3": {"ace-high": SpotLimits(500, 100_000)},
    }
    rules = config.tables[0].rules
    assert rules.wager_limits == {Spot.BONUS: SpotLimits(500, 10_000)}


def test_a_spot_override_sets_either_bound(tmp_path: Path) -> None:
    extra = (
        'ace_high = "ace-high-1"\nminimum_wager = "$5"\nmaximum_wager = "$200"\n'
        'wager_limits = { bonus = { minimum = "$10" }, ace_high = { maximum = "$1,000.50" } }\n'
    )
    assert limits_of(tmp_path, extra) == {
        "bonus": SpotLimits(1_000, 20_000),
        "ace-high": SpotLimits(500, 100_050),
    }


def test_a_table_with_only_the_progressive_has_no_limits_to_set(tmp_path: Path) -> None:
    path = tmp_path / "jackpotd.toml"
    path.write_text(BASE.replace('bonus = "fortune-1"\n', ""), encoding="utf-8")
    assert load_config(path).tables[0].event.wager_limits == {}


@pytest.mark.parametrize(
    ("extra", "key", "reason"),
    [
        ('maximum_wager = "$0.50"\n', "maximum_wager", "$0.50 is below minimum_wager $1.00"),
        ('maximum_wager = "1000"\n', "maximum_wager", "is not a dollar amount"),
        ('maximum_wager = "$0"\n', "maximum_wager", "must be at least $0.01"),
        (
            'wager_limits = { progressive = { maximum = "$5" } }\n',
            "wager_limits.progressive",
            "the progressive wager is its paytable's one denomination; it takes no limits",
        ),
        (
            'wager_limits = { ace_high = { maximum = "$5" } }\n',
            "wager_limits.ace_high",
            "the table offers no ace_high wager",
        ),
        (
            'wager_limits = { bonus = { minimum = "$10", maximum = "$5" } }\n',
            "wager_limits.bonus",
            "the maximum $5.00 is below the minimum $10.00",
        ),
        (
            'wager_limits = { bonus = { minimum = "$2,000" } }\n',
            "wager_limits.bonus",
            "the maximum $1,000.00 is below the minimum $2,000.00",
        ),
        (
            'wager_limits = { bonus = { minimum = "$0.00" } }\n',
            "wager_limits.bonus.minimum",
            "must be at least $0.01",
        ),
        ('wager_limits = { side = { maximum = "$5" } }\n', "wager_limits.side", "unknown field"),
        ('wager_limits = { bonus = { max = "$5" } }\n', "wager_limits.bonus.max", "unknown field"),
    ],
)
def test_a_bad_limit_names_the_file_the_key_and_the_reason(
    tmp_path: Path, extra: str, key: str, reason: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, extra)
    error = caught.value
    assert error.source.endswith("jackpotd.toml")
    assert error.key == f"tables[0].{key}"
    assert reason in error.reason
    assert str(error).startswith(f"{error.source}: tables[0].{key}: ")


def test_a_table_configured_before_limits_is_reconfigured_with_them_at_start(
    tmp_path: Path,
) -> None:
    config = load(tmp_path)
    events = config_events(config, LedgerState(), AT)
    state = LedgerState()
    for event in events:
        state, _ = apply(state, event)
    assert config_events(config, state, AT) == []
    # The journal's table event as the controller wrote it before limits: no wager_limits.
    old = msgspec.structs.replace(state.table_events["t1"], wager_limits=msgspec.UNSET)
    state, _ = apply(state, msgspec.structs.replace(old, event_id="old"))
    assert state.tables["t1"].wager_limits is None
    (again,) = config_events(config, state, AT)
    state, _ = apply(state, again)
    assert state.tables["t1"].wager_limits == {Spot.BONUS: SpotLimits(100, 100_000)}


def test_config_check_shows_each_spots_limits(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = check(capsys, str(SAMPLE))
    assert (status, err) == (0, "")
    assert "t1: 6 seats over mqtt;" in out
    assert "bonus $5.00 to $100.00, max payout $100,000.00" in out
    assert "t3: 6 seats over simulator; ace high ace-high-1; ace-high $5.00 to $1,000.00" in out
    status, out, _ = check(capsys, str(SAMPLE), "--json")
    tables = {table["id"]: table["wager_limits"] for table in json.loads(out)["tables"]}
    assert tables["t1"] == {"bonus": {"minimum_cents": 500, "maximum_cents": 10_000}}
