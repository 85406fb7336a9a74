"""deploy/prometheus and the lab stack: promtool, the metrics the rules name, docs/metrics.md.

``promtool`` (Debian: ``apt-get install prometheus``; or set ``PROMTOOL``) checks the
configuration and the rules and runs the rules' unit tests (alerts.test.yml). The metrics the
daemon exports are read from its own exposition: a small in-process controller (a real journal,
the sequencer, the liveness monitor, stand-ins for the MQTT and serial drivers) is driven until
every metric family has samples, and ``ControllerMetrics.exposition()`` is parsed. Every metric
and label that the alerts, the dashboard (tests/deploy/test_deploy_grafana.py) and
docs/metrics.md name must be in it, and docs/metrics.md must document every family with its type
and labels.

The lab stack (deploy/docker-compose.yml) cannot run here (no Docker): its structure is checked
instead, against the files it mounts, the credentials make-secrets.sh makes and the
configurations it installs. Parsing it needs PyYAML.
"""

from __future__ import annotations

import inspect
import os
import re
import shutil
import subprocess
import tomllib
from typing import TYPE_CHECKING, Any

import pytest
from support.deploy.deploy_rig import (
    DEPLOY,
    REPO,
    TARGET_LABELS,
    bind_mounts,
    compose,
    exported,
    load_yaml,
    promql_problems,
    promtool,
    sample_names,
)

from controller.config.load import load_config
from drivers.mqtt.sink import MqttSink
from drivers.mqtt.source import MqttSource

if TYPE_CHECKING:
    from pathlib import Path

PROMETHEUS = DEPLOY / "prometheus"
ALERTS = PROMETHEUS / "alerts.yml"
METRICS_DOC = REPO / "docs" / "metrics.md"

"""Labels Prometheus adds to every series (prometheus.yml's target labels included)."""


# The metrics the daemon exports.


PROCESS = frozenset({
    "process_cpu_seconds", "process_resident_memory_bytes", "process_virtual_memory_bytes",
    "process_open_fds", "process_max_fds", "process_start_time_seconds", "python_info",
})  # fmt: skip
"""prometheus_client's process and platform collectors, under their usual names."""


def test_every_family_has_samples_and_the_daemon_namespace() -> None:
    families = exported()
    assert len(families) >= 25
    for family in families.values():
        assert family.samples, f"{family.name} has no samples: drive it in exported()"
    assert {name for name in families if not name.startswith("jackpotd_")} == PROCESS


def test_a_moment_is_a_unix_time_never_an_age() -> None:
    """Ages go stale between scrapes; Prometheus computes them: time() - x_timestamp_seconds."""
    seconds = {
        family.name
        for family in exported().values()
        if family.type == "gauge" and family.name.endswith("_seconds")
    }
    assert seconds == {
        "jackpotd_checkpoint_timestamp_seconds",
        "jackpotd_pending_oldest_timestamp_seconds",
        "jackpotd_site_last_heard_timestamp_seconds",
        "jackpotd_table_last_event_timestamp_seconds",
        "jackpotd_wide_area_central_last_heard_timestamp_seconds",
        "process_start_time_seconds",
    } | {name for name in seconds if name.endswith("_created")}
    rows = documented()
    for name in seconds - {"process_start_time_seconds"}:
        if not name.endswith("_created"):
            assert rows[name][2] == "Unix time", name


def test_no_family_has_a_label_prometheus_gives_the_target() -> None:
    """Prometheus would rename it exported_<label>: a linked property is not labelled site."""
    clashes = {
        family.name: family.labels & TARGET_LABELS
        for family in exported().values()
        if family.labels & TARGET_LABELS
    }
    assert clashes == {}


# PromQL: the metrics and labels an expression uses.

"""Series Prometheus itself makes for the jackpotd job."""


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
    assert promql_problems("sum by (sign) (jackpotd_pending_pays)") == [
        "no metric here has label 'sign'"
    ]
    assert promql_problems("go_goroutines offset 5m") == ["unknown metric 'go_goroutines'"]
    assert promql_problems("rate(process_cpu_seconds_total[5m])") == []


# promtool.


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
        # Wide-area links (docs/wide-area.md, "Operations"): a property's, then central's.
        "JackpotdWideAreaClosed",
        "JackpotdWideAreaBacklog",
        "JackpotdSiteSilent",
        "JackpotdSiteHalted",
        "JackpotdSiteUnreconciled",
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
        if len(cells) == 5 and re.fullmatch(r"`(?:jackpotd|process|python)_\w+`", cells[0]):
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
    broker = config.settings("broker")
    assert broker is not None
    assert broker.host in services
    conf = (DEPLOY / "mosquitto" / "mosquitto.conf").read_text(encoding="utf-8")
    assert f"\nlistener {broker.port}\n" in conf
    assert broker.tls is not None
    acl = (DEPLOY / "mosquitto" / "acl").read_text(encoding="utf-8")
    assert f"\nuser {broker.username}\n" in acl
    assert f"\nuser {broker.out_username}\n" in acl
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
