"""deploy/prometheus and the lab stack: promtool, the metrics the rules name, docs/metrics.md.

``promtool`` (Debian: ``apt-get install prometheus``; or set ``PROMTOOL``) checks the
configuration and the rules and runs the rules' unit tests (alerts.test.yml). The metrics the
daemon exports are read from its own exposition: a small in-process controller (a real journal,
the sequencer, the liveness monitor, stand-ins for the MQTT and serial drivers) is driven until
every metric family has samples, and ``ControllerMetrics.exposition()`` is parsed. Every metric
and label that the alerts, the dashboard (tests/test_deploy_grafana.py) and docs/metrics.md name
must be in it, and docs/metrics.md must document every family with its type and labels.

The lab stack (deploy/docker-compose.yml) cannot run here (no Docker): its structure is checked
instead, against the files it mounts, the credentials make-secrets.sh makes and the
configurations it installs. Parsing it needs PyYAML.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import re
import shutil
import subprocess
import tempfile
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from controller.broadcast import Broadcast
from controller.clock import utc_now
from controller.config import load_config
from controller.events import BetSensed, BetsLocked, PoolOpened, TableConfigured
from controller.journal import Journal
from controller.liveness import Liveness
from controller.metrics import ControllerMetrics
from controller.sequencer import Sequencer
from drivers.mqtt.sink import MqttSink
from drivers.mqtt.source import MqttSource
from drivers.poison import SourceHealth

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).resolve().parent.parent
DEPLOY = REPO / "deploy"
PROMETHEUS = DEPLOY / "prometheus"
ALERTS = PROMETHEUS / "alerts.yml"
METRICS_DOC = REPO / "docs" / "metrics.md"
AT = "2026-11-29T15:00:00Z"

TARGET_LABELS = frozenset({"job", "instance", "site", "controller"})
"""Labels Prometheus adds to every series (prometheus.yml's target labels included)."""


# The metrics the daemon exports.


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
    with tempfile.TemporaryDirectory() as directory, Journal(Path(directory) / "j.db") as journal:
        journal.append_many(
            [
                PoolOpened("pool", AT, "P1", "progressive-1", 1_000_000, Decimal("0.28")),
                TableConfigured(
                    "table",
                    AT,
                    "T1",
                    {"progressive-1": _paytable("progressive-1")},
                    progressive="progressive-1",
                    pool_id="P1",
                ),
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
        metrics.hits["P1", "T1", "royal-flush"] += 1
        metrics.payouts["T1", "progressive", "royal-flush"] += 1
        metrics.payout_cents["T1", "progressive", "royal-flush"] += 1_000_000
        metrics.refunded["P1", "T1"] += 28
        metrics.refused_wagers["T1", "bonus"] += 1
        metrics.event_to_sign_seconds.labels(sign="alpha-1").observe(0.2)
        metrics.mqtt += [Stub("mqtt"), Stub("mqtt-display")]
        metrics.serial.append(Stub("serial:t2-devices", errors=Counter({"bad-crc": 1})))
        # What hostile or broken devices would have counted (docs/faults.md).
        stats = sequencer.stats
        stats.conflicts["T1"] += 1
        stats.gaps["T1"] += 1
        stats.lost_events["T1"] += 3
        stats.rejections_left_out += 1
        stats.internal_errors += 1
        metrics.sources.append(Reporting("mqtt", SourceHealth(failures_in_row=3, dead_letters=1)))
        text = metrics.exposition().decode()
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


def test_every_family_has_samples_and_the_daemon_namespace() -> None:
    families = exported()
    assert len(families) >= 25
    for family in families.values():
        assert family.samples, f"{family.name} has no samples: drive it in exported()"
        assert family.name.startswith("jackpotd_"), family.name


# PromQL: the metrics and labels an expression uses.

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
"""Series Prometheus itself makes for the jackpotd job."""


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


def test_promql_problems_finds_unknown_metrics_and_labels() -> None:
    good = (
        "histogram_quantile(0.99, sum by (job, le) (rate(jackpotd_journal_commit_seconds_bucket"
        '{instance=~"$x"}[5m]))) > 0.25 and on (instance) up{job="jackpotd"} == 1'
    )
    assert promql_problems(good) == []
    assert promql_problems("rate(jackpotd_hits[5m])") == ["unknown metric 'jackpotd_hits'"]
    assert promql_problems('jackpotd_table_online{pool="x"}') == [
        "jackpotd_table_online has no label 'pool'"
    ]
    assert promql_problems("sum by (sign) (jackpotd_pending_hits)") == [
        "no metric here has label 'sign'"
    ]
    assert promql_problems("process_cpu_seconds_total offset 5m") == [
        "unknown metric 'process_cpu_seconds_total'"
    ]


# promtool.


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


def test_promtool_checks_the_configuration_and_its_rule_files() -> None:
    result = promtool("check", "config", PROMETHEUS / "prometheus.yml")
    assert "1 rule files found" in result.stdout


def alert_expressions() -> list[str]:
    """The ``expr`` of each rule in alerts.yml (inline, or a block scalar on the lines below)."""
    lines = ALERTS.read_text(encoding="utf-8").splitlines()
    expressions = []
    for index, line in enumerate(lines):
        key, _, value = line.strip().partition(": ")
        if key not in {"expr", "- expr"} and line.strip() not in {"expr: >-", "expr: |"}:
            continue
        if value.strip() not in {">-", "|", ""} and not line.strip().endswith((">-", "|")):
            expressions.append(value.strip())
            continue
        indent = len(line) - len(line.lstrip())
        block = []
        for following in lines[index + 1 :]:
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            block.append(following.strip())
        expressions.append(" ".join(part for part in block if part))
    return expressions


def test_promtool_checks_the_rules_and_they_use_only_exported_metrics() -> None:
    result = promtool("check", "rules", ALERTS)
    found = re.search(r"SUCCESS: (\d+) rules found", result.stdout)
    assert found is not None, result.stdout
    expressions = alert_expressions()
    assert len(expressions) == int(found.group(1)), "every rule's expression was read"
    problems = {expr: promql_problems(expr) for expr in expressions}
    assert {expr: found for expr, found in problems.items() if found} == {}
    # Anything else in the file that looks like one of ours (annotations, comments) exists too.
    text = ALERTS.read_text(encoding="utf-8")
    assert set(re.findall(r"\bjackpotd_\w+", text)) <= sample_names().keys()


def test_the_alerts_cover_what_the_issue_asks_for() -> None:
    text = ALERTS.read_text(encoding="utf-8")
    alerts = set(re.findall(r"- alert: (\w+)", text))
    assert {
        "JackpotdDown",
        "JackpotdTableOffline",
        "JackpotdMeterStale",
        "JackpotdPendingJackpot",
        "JackpotdJournalErrors",
        "JackpotdFailingClosed",
        "JackpotdRejectedInputSpike",
    } <= alerts
    # Each one is documented for the people it pages.
    operations = (REPO / "docs" / "operations.md").read_text(encoding="utf-8")
    assert all(alert in operations for alert in alerts)


def test_promtool_unit_tests_of_the_alerts_pass() -> None:
    tests = PROMETHEUS / "alerts.test.yml"
    result = promtool("test", "rules", tests)
    assert "SUCCESS" in result.stdout
    text = tests.read_text(encoding="utf-8")
    assert set(re.findall(r"\bjackpotd_\w+", text)) <= sample_names().keys()
    # Every alert is exercised: fired at least once in the tests.
    alerts = set(re.findall(r"- alert: (\w+)", ALERTS.read_text(encoding="utf-8")))
    fired = set(re.findall(r"alertname: (\w+)\n\s+exp_alerts:\n\s+- exp_labels", text))
    assert alerts == fired


def test_the_mqtt_client_labels_in_the_alerts_are_the_drivers_names() -> None:
    names = {
        inspect.signature(driver.__init__).parameters["name"].default
        for driver in (MqttSource, MqttSink)
    }
    assert names == {"mqtt", "mqtt-display"}
    used = set(re.findall(r'client="([^"]+)"', ALERTS.read_text(encoding="utf-8")))
    assert used == names


# docs/metrics.md.


def documented() -> dict[str, tuple[str, frozenset[str], str]]:
    """The metrics table of docs/metrics.md: name to (type, labels, unit)."""
    rows = {}
    for line in METRICS_DOC.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and re.fullmatch(r"`jackpotd_\w+`", cells[0]):
            labels = frozenset(re.findall(r"`(\w+)`", cells[2]))
            rows[cells[0].strip("`")] = (cells[1], labels, cells[3])
    return rows


def test_docs_metrics_documents_every_exported_metric_with_its_type_and_labels() -> None:
    rows = documented()
    families = {family.query_name: family for family in exported().values()}
    # The _created gauges prometheus_client adds beside each histogram are mentioned, not listed.
    families = {name: f for name, f in families.items() if not name.endswith("_created")}
    assert rows.keys() == families.keys()
    for name, (kind, labels, unit) in rows.items():
        assert (kind, labels) == (families[name].type, families[name].labels), name
        assert unit, f"{name}: no unit"
    # Every name the page mentions exists.
    text = METRICS_DOC.read_text(encoding="utf-8")
    assert set(re.findall(r"\bjackpotd_\w+", text)) <= sample_names().keys()


# The lab stack: deploy/docker-compose.yml.


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


def script(service: dict[str, Any]) -> str:
    command = service["command"]
    return command[0] if isinstance(command, list) else str(command)


def installs(service: dict[str, Any]) -> dict[str, str]:
    """What the service's start-up script installs: destination to source."""
    copies = {}
    for line in script(service).splitlines():
        words = line.split()
        if words[:1] == ["install"] and "-d" not in words:
            copies[words[-1]] = words[-2]
    return copies


def test_compose_has_the_lab_services_and_mounts_files_of_the_repository() -> None:
    document = compose()
    services = document["services"]
    assert set(services) == {"broker", "controller", "prometheus", "grafana"}
    for name, service in services.items():
        assert "image" in service, name
        for source, target in bind_mounts(service):
            host = (DEPLOY / source).resolve()
            if host == (DEPLOY / "lab" / "secrets").resolve():
                continue  # made by make-secrets.sh, never committed (deploy/lab/.gitignore)
            assert host.exists(), f"{name}: {source} (mounted at {target}) is not in the repo"
        for port in service.get("ports", []):
            assert port.startswith("127.0.0.1:"), f"{name}: {port} is not loopback-only"
    assert "/secrets/" in (DEPLOY / "lab" / ".gitignore").read_text(encoding="utf-8")
    named = {v.split(":")[0] for s in services.values() for v in s.get("volumes", [])}
    assert {v for v in named if not v.startswith((".", "/"))} == set(document["volumes"])
    # The controller is built from this repository with deploy/Dockerfile.
    build = services["controller"]["build"]
    context = (DEPLOY / build["context"]).resolve()
    dockerfile = context / build["dockerfile"]
    assert context == REPO
    assert dockerfile.is_file()
    for line in dockerfile.read_text(encoding="utf-8").splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (context / source).exists(), source


def test_the_broker_runs_the_shipped_conf_with_the_files_it_names(tmp_path: Path) -> None:
    broker = compose()["services"]["broker"]
    mounts = {target: source for source, target in bind_mounts(broker)}
    conf = dict(
        line.strip().split(" ", 1)
        for line in (DEPLOY / "mosquitto" / "mosquitto.conf").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    )
    command = script(broker)
    started = re.search(r"exec /usr/sbin/mosquitto -c (\S+)", command)
    assert started is not None
    assert mounts[started.group(1)] == "./mosquitto/mosquitto.conf"
    copies = installs(broker)
    for key in ("cafile", "certfile", "keyfile", "password_file", "acl_file"):
        assert conf[key] in copies, f"the broker does not install {key} {conf[key]}"
    assert copies[conf["acl_file"]] == "/lab/acl"
    assert mounts["/lab/acl"] == "./mosquitto/acl"
    assert f"-d -o {conf['user']} -g {conf['user']}" in command
    assert conf["persistence_location"].rstrip("/") in command
    assert any(target == conf["persistence_location"].rstrip("/") for target in _volumes(broker))
    ports = [p.rsplit(":", 1)[-1] for p in broker["ports"]]
    assert ports == [conf["listener"]]
    # What it installs from the secrets is what make-secrets.sh makes.
    secrets = made_secrets(tmp_path)
    for source in copies.values():
        if source.startswith("/lab/secrets/"):
            assert (secrets / source.removeprefix("/lab/secrets/")).is_file(), source


def _volumes(service: dict[str, Any]) -> list[str]:
    return [volume.split(":")[1] for volume in service.get("volumes", [])]


def made_secrets(directory: Path) -> Path:
    """Run make-secrets.sh as the lab's instructions say, for table t1."""
    for command in ("openssl", "mosquitto_passwd"):
        if shutil.which(command, path=f"{os.environ.get('PATH', '')}:/usr/bin") is None:
            pytest.fail(f"{command} not found: apt-get install openssl mosquitto", pytrace=False)
    secrets = directory / "secrets"
    subprocess.run(
        ["/bin/sh", str(DEPLOY / "mosquitto" / "make-secrets.sh"), str(secrets), "t1"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return secrets


def test_the_controller_runs_the_lab_configuration_against_the_stack(tmp_path: Path) -> None:
    services = compose()["services"]
    controller = services["controller"]
    mounts = {target: source for source, target in bind_mounts(controller)}
    command = script(controller)
    started = re.search(r"run --config (\S+)", command)
    assert started is not None
    copies = installs(controller)
    lab = mounts[copies[started.group(1)]]
    assert lab == "./lab/jackpotd.toml"
    # The configuration is valid once the files it names exist (here, in tmp_path), and the
    # container installs each of them from what make-secrets.sh makes.
    secrets = made_secrets(tmp_path)
    text = (DEPLOY / lab).read_text(encoding="utf-8")
    named = re.findall(r'"(/etc/jackpotd/[^"]+)"', text)
    assert named
    for path in named:
        source = copies[path]
        assert source.startswith("/lab/secrets/"), path
        local = tmp_path / path.removeprefix("/")
        local.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(secrets / source.removeprefix("/lab/secrets/"), local)
    (tmp_path / "jackpotd.toml").write_text(text.replace('"/etc/', f'"{tmp_path}/etc/'))
    config = load_config(tmp_path / "jackpotd.toml")
    raw = tomllib.loads(text)
    # It reaches the broker by its service name on the TLS port, as the users the ACL names.
    assert config.broker is not None
    assert config.broker.host in services
    conf = (DEPLOY / "mosquitto" / "mosquitto.conf").read_text(encoding="utf-8")
    assert f"\nlistener {config.broker.port}\n" in conf
    assert config.broker.tls is not None
    acl = (DEPLOY / "mosquitto" / "acl").read_text(encoding="utf-8")
    assert f"\nuser {config.broker.username}\n" in acl
    assert f"\nuser {config.broker.out_username}\n" in acl
    assert f" {config.controller.site}/jackpot/v1/" in acl
    # Prometheus scrapes it where it serves.
    assert raw["web"]["host"] == "0.0.0.0"  # noqa: S104 - inside the container's network
    targets = re.findall(r'targets: \["([^"]+)"\]', (PROMETHEUS / "prometheus.yml").read_text())
    assert f"controller:{config.web.port}" in targets
    assert f"127.0.0.1:{config.web.port}:{config.web.port}" in controller["ports"]
    assert "setpriv --reuid=jackpotd" in command


def test_prometheus_gets_its_rules_beside_its_configuration() -> None:
    service = compose()["services"]["prometheus"]
    mounts = {target: source for source, target in bind_mounts(service)}
    assert mounts["/etc/prometheus/prometheus.yml"] == "./prometheus/prometheus.yml"
    for rule_file in load_yaml(PROMETHEUS / "prometheus.yml")["rule_files"]:
        assert mounts[f"/etc/prometheus/{rule_file}"] == f"./prometheus/{rule_file}"
