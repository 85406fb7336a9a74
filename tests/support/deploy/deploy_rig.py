"""The shipped deploy/ files read as their tools read them: compose, rules, promtool, metrics."""

from __future__ import annotations

import asyncio
import functools
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from controller.clock import utc_now
from controller.events import BetSensed, BetsLocked, PoolOpened, TableConfigured
from controller.ledger_journal.sqlite import Journal
from controller.outputs import FollowerOrder
from controller.runtime.broadcast import Broadcast
from controller.runtime.liveness import Liveness
from controller.runtime.metrics import ControllerMetrics
from controller.runtime.sequencer import Sequencer
from controller.security.controller_key import ControllerKey
from controller.web.gate import GateCounts, GateMetrics
from controller.wide_events import SiteLinked, WideAreaJoined
from controller.widearea.property_link import SitePosition
from drivers.mqtt.metrics import (
    AgentFamilies,
    BrokerLinkFamilies,
    SiteTrafficFamilies,
    UplinkFamilies,
)
from drivers.mqtt.site_answers import DROP_REASONS
from drivers.mqtt.uplink_refusals import REFUSALS
from drivers.poison import SourceHealth
from drivers.serial.metrics import SerialFamilies
from drivers.signs.metrics import FollowerFamilies

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).resolve().parents[3]
DEPLOY = REPO / "deploy"
AT = "2026-11-29T15:00:00Z"
TARGET_LABELS = frozenset({"job", "instance", "site", "controller"})


@dataclass(frozen=True)
class Family:
    """One exported metric family: its name as exposed, its type, labels and sample names."""

    name: str
    type: str
    labels: frozenset[str]
    samples: frozenset[str]

    @property
    def query_name(self) -> str:
        """The name PromQL uses for the family (histograms: the base of _bucket/_sum/_count)."""
        return f"{self.name}_total" if self.type == "counter" else self.name


@dataclass
class Stub:
    """What metrics read of an MQTT or serial driver."""

    name: str
    connected: bool = True
    reconnects: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    refusals: tuple[str, ...] = ()


@dataclass
class AgentLink:
    """What metrics read of a source table agents send through."""

    name: str
    agent_gaps: int = 0
    agent_acks: int = 0
    agent_refused: int = 0


@dataclass
class SiteTraffic:
    """What metrics read of central's answers to its linked properties."""

    site_drops: Counter[tuple[str, str]]
    site_acks: Counter[str]
    drop_reasons: tuple[str, ...] = DROP_REASONS

    def heard_at(self, site: str) -> float:  # noqa: ARG002 - every property heard at once
        """When the property was last heard."""
        return 1_796_000_000.0

    def linked(self) -> list[str]:
        """The properties the journal links (the rig's journal links one)."""
        return ["atlantic"]


@dataclass
class Uplink:
    """What metrics read of a property's link to central."""

    position: SitePosition
    connected: bool = True
    published: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    refusals: tuple[str, ...] = REFUSALS
    heard_at: float = 1_796_000_000.0


@dataclass
class Reporting:
    """What metrics read of a source's health."""

    name: str
    health: SourceHealth


def _paytable(name: str) -> str:
    return (resources.files("controller") / "paytables" / f"{name}.toml").read_text()


async def _activity(sequencer: Sequencer) -> None:
    runner = asyncio.create_task(sequencer.run())
    for seat in (1, 2):
        await sequencer.submit(
            BetSensed(f"T1/s/{seat}", AT, "T1", "s", seat, seat, "progressive", True)
        )
    await sequencer.submit(BetsLocked("T1/c/1", AT, "T1", "c", 1, "R1"))
    await sequencer.reject("mqtt:test", "bad-json", "not JSON")
    runner.cancel()


@functools.cache
def exported() -> dict[str, Family]:
    """Every family of a small live controller's exposition, by name, each with samples."""
    key = ControllerKey.generate().public_key
    with tempfile.TemporaryDirectory() as directory, Journal(Path(directory) / "j.db") as journal:
        journal.append_many(
            [
                PoolOpened("pool", AT, "P1", "progressive-1", 1_000_000, Decimal("0.28")),
                # A mystery level of a multi-level pool, for the levels' families.
                PoolOpened(
                    "level",
                    AT,
                    "P2.grand",
                    "house-mystery",
                    1_000,
                    Decimal("0.1"),
                    must_hit_by_cents=1_200,
                ),
                TableConfigured(
                    "table",
                    AT,
                    "T1",
                    {"progressive-1": _paytable("progressive-1")},
                    progressive="progressive-1",
                    pool_id="P1",
                ),
                # Central's link to a property, and (in the same journal, for the families'
                # sake) a property's join to another central.
                SiteLinked("link", AT, "atlantic", key, ["P1"], "mgr"),
                WideAreaJoined("join", AT, "boardwalk", key, {"W1": "progressive-1"}, "mgr"),
            ]
        )
        sequencer = Sequencer(journal, Broadcast())
        liveness = Liveness({"T1": 10.0}, clock=utc_now)
        metrics = ControllerMetrics(journal, sequencer, liveness)
        sequencer.on_commit.append(metrics.observe)
        asyncio.run(_activity(sequencer))
        # What a settled round, a hit and the drivers would have counted; the families and
        # their labels are what collect() builds from them.
        metrics.wagers["T1", "progressive"] += 2
        metrics.hits["P1", "T1", "five-aces"] += 1
        metrics.pays["T1", "progressive", "five-aces"] += 1
        metrics.pay_cents["T1", "progressive", "five-aces"] += 100_000
        metrics.refunded["P1", "T1"] += 28
        metrics.refused_wagers["T1", "bonus"] += 1
        metrics.event_to_sign_seconds.labels(sign="alpha-1").observe(0.2)
        # The drivers' own families (drivers/*/metrics.py), as their parts hand them in.
        metrics.collectors += [
            FollowerFamilies(FollowerOrder("alpha-sign:alpha-1")),
            BrokerLinkFamilies([Stub("mqtt"), Stub("mqtt-display")]),
            AgentFamilies(AgentLink("mqtt", agent_gaps=1, agent_acks=4)),
            SerialFamilies(Stub("serial:t2-devices", errors=Counter({"bad-crc": 1}))),
            SiteTrafficFamilies(
                SiteTraffic(Counter({("atlantic", "gap"): 2}), Counter({"atlantic": 9}))
            ),
            UplinkFamilies(Uplink(SitePosition("boardwalk", 0, 0, 0), published=3), lambda: 0),
        ]
        # What hostile or broken devices would have counted (docs/faults.md).
        stats = sequencer.stats
        stats.conflicts["T1"] += 1
        stats.gaps["T1"] += 1
        stats.lost_events["T1"] += 3
        stats.rejections_left_out += 1
        stats.internal_errors += 1
        metrics.sources.append(Reporting("mqtt", SourceHealth(failures_in_row=3, dead_letters=1)))
        # The web port's own, registered beside them as the display serves (controller/web/gate.py)
        metrics.registry.register(GateMetrics(GateCounts(cap=1024)))
        text = metrics.exposition("")[0].decode()
    families = {}
    for family in text_string_to_metric_families(text):
        labels = {label for sample in family.samples for label in sample.labels} - {"le"}
        samples = frozenset(sample.name for sample in family.samples)
        families[family.name] = Family(family.name, family.type, frozenset(labels), samples)
    return families


def sample_names() -> dict[str, Family]:
    """Every name a query may use (``_total``, ``_bucket``... included), to its family."""
    names = {}
    for family in exported().values():
        names[family.query_name] = family
        for sample in family.samples:
            names[sample] = family
    return names


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*\{([^}]*)\}")
_MATCHER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
_IDENTIFIER = re.compile(r"(?<![\w.$])[A-Za-z_:][A-Za-z0-9_:]*")
KEYWORDS = frozenset(
    {"and", "or", "unless", "offset", "bool", "atan2", "inf", "nan", "Inf", "NaN"}
    | {"by", "without", "on", "ignoring", "group_left", "group_right"}
)


OTHER_METRICS = frozenset({"up"})


def promql_problems(expr: str) -> list[str]:
    """What an expression names that the daemon does not export (empty if nothing)."""
    names = sample_names()
    problems = []
    # Label names in selectors, before the strings are blanked out.
    for metric, matchers in _SELECTOR.findall(_STRING.sub('""', expr)):
        family = names.get(metric)
        known = (family.labels if family else set()) | TARGET_LABELS
        if metric.endswith("_bucket"):
            known |= {"le"}
        problems += [
            f"{metric} has no label {label!r}"
            for label in _MATCHER.findall(matchers)
            if label not in known
        ]
    text = _STRING.sub('""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    grouped = {label.strip() for group in _GROUPING.findall(text) for label in group.split(",")}
    text = _GROUPING.sub(" ", text)
    metrics = set()
    for match in _IDENTIFIER.finditer(text):
        word = match.group()
        if word in KEYWORDS or text[match.end() :].lstrip().startswith("("):
            continue  # a keyword or a function
        metrics.add(word)
    problems += [
        f"unknown metric {metric!r}" for metric in sorted(metrics - names.keys() - OTHER_METRICS)
    ]
    available = set(TARGET_LABELS)
    for metric in metrics & names.keys():
        available |= names[metric].labels | ({"le"} if metric.endswith("_bucket") else set())
    problems += [
        f"no metric here has label {label!r}" for label in sorted(grouped - available - {""})
    ]
    return problems


def promtool(*arguments: str | Path) -> subprocess.CompletedProcess[str]:
    """Run promtool; the test fails (with its output) if it does."""
    command = os.environ.get("PROMTOOL") or shutil.which("promtool")
    if command is None:
        pytest.fail(
            "promtool not found: apt-get install prometheus (or set PROMTOOL to its path)",
            pytrace=False,
        )
    result = subprocess.run(
        [command, *map(str, arguments)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def compose() -> dict[str, Any]:
    document = load_yaml(DEPLOY / "docker-compose.yml")
    assert isinstance(document, dict)
    return document


def bind_mounts(service: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(host path, container path) of each bind mount (named volumes left out)."""
    for volume in service.get("volumes", []):
        source, target = volume.split(":")[:2]
        if source.startswith((".", "/")):
            yield source, target
