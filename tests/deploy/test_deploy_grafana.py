"""deploy/grafana: the dashboard is valid, covers what ops watch, and queries only real metrics.

Every PromQL expression of the dashboard (panels, template variables, annotations) must name
only metrics and labels that the daemon exports (read from a live in-process controller by
tests/deploy/test_deploy_prometheus.py) and must parse: promtool checks each one as a
recording rule, with Grafana's variables replaced by values. The lab's provisioning files must
point Grafana at the dashboard and at the lab's Prometheus.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from support.deploy.deploy_rig import (
    DEPLOY,
    bind_mounts,
    compose,
    exported,
    load_yaml,
    promql_problems,
    promtool,
    sample_names,
)

if TYPE_CHECKING:
    from pathlib import Path

GRAFANA = DEPLOY / "grafana"
DASHBOARD = GRAFANA / "jackpotd-dashboard.json"
PROVISIONING = GRAFANA / "provisioning"

GRAFANA_VARIABLES = {
    "$__rate_interval": "1m",
    "$__interval": "1m",
    "$__range": "1h",
}


def dashboard() -> dict[str, Any]:
    document = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def panels() -> list[dict[str, Any]]:
    """Every panel, those inside collapsed rows included (rows themselves left out)."""
    found = []
    for panel in dashboard()["panels"]:
        if panel["type"] == "row":
            found += panel.get("panels", [])
        else:
            found.append(panel)
    return found


def rows() -> list[tuple[str, list[dict[str, Any]]]]:
    """Each row's title and the panels under it, in order."""
    grouped: list[tuple[str, list[dict[str, Any]]]] = []
    for panel in dashboard()["panels"]:
        if panel["type"] == "row":
            grouped.append((panel["title"], list(panel.get("panels", []))))
        else:
            assert grouped, "a panel above the first row"
            grouped[-1][1].append(panel)
    return grouped


def expressions() -> list[str]:
    """Every PromQL expression in the dashboard."""
    found = [
        target["expr"]
        for panel in panels()
        for target in panel.get("targets", [])
        if "expr" in target
    ]
    for variable in dashboard()["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            found.append(query["query"] if isinstance(query, dict) else query)
    found += [a["expr"] for a in dashboard()["annotations"]["list"] if "expr" in a]
    return found


def as_promql(expr: str) -> str:
    """An expression Prometheus can parse: Grafana's variables and label_values() replaced."""
    values = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", expr)
    if values is not None:
        expr = f"count by ({values.group(2)}) ({values.group(1)})"
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    return expr


def test_the_dashboard_is_valid_json_with_unique_panels_on_the_grid() -> None:
    document = dashboard()
    assert document["uid"] == "jackpotd"
    assert document["title"]
    assert isinstance(document["schemaVersion"], int)
    every = [*dashboard()["panels"]]
    ids = [panel["id"] for panel in every]
    assert len(ids) == len(set(ids)), "panel ids are unique"
    cells: set[tuple[int, int]] = set()
    for panel in every:
        grid = panel["gridPos"]
        assert grid["x"] >= 0, panel["title"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        covered = {
            (x, y)
            for x in range(grid["x"], grid["x"] + grid["w"])
            for y in range(grid["y"], grid["y"] + grid["h"])
        }
        assert not covered & cells, f"{panel['title']} overlaps another panel"
        cells |= covered
    for panel in panels():
        assert panel["title"], panel["id"]
        assert panel.get("description"), panel["title"]
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == panel["datasource"]


def test_the_dashboard_shows_meters_hits_table_health_and_latencies() -> None:
    sections = dict(rows())
    needs = {
        "Meters": {"jackpotd_pool_meter_dollars", "jackpotd_contributions_dollars_total"},
        "Hits and pays": {"jackpotd_hits_total", "jackpotd_pending_pays", "jackpotd_pays_total"},
        "Table health": {"jackpotd_table_online", "jackpotd_rejected_inputs_total"},
        "Latencies": {
            "jackpotd_journal_commit_seconds_bucket",
            "jackpotd_event_to_commit_seconds_bucket",
            "jackpotd_event_to_sign_seconds_bucket",
        },
        "Process": {
            "jackpotd_build_info",
            "process_cpu_seconds_total",
            "process_resident_memory_bytes",
            "process_open_fds",
            "process_start_time_seconds",
        },
        "Cluster": {"jackpotd_standby", "jackpotd_sequencer_epoch", "jackpotd_journal_head_seq"},
        "Wide-area link": {
            "jackpotd_wide_area_open",
            "jackpotd_wide_area_connected",
            "jackpotd_wide_area_acked_seq",
            "jackpotd_wide_area_backlog",
            "jackpotd_wide_area_published_total",
            "jackpotd_wide_area_refused_total",
            "jackpotd_wide_area_central_last_heard_timestamp_seconds",
            "jackpotd_site_applied_seq",
            "jackpotd_site_reconciled_seq",
            "jackpotd_site_halted",
            "jackpotd_site_dropped_total",
            "jackpotd_site_acks_total",
            "jackpotd_site_last_heard_timestamp_seconds",
        },
    }
    assert list(sections) == list(needs)
    for title, metrics in needs.items():
        text = " ".join(t["expr"] for p in sections[title] for t in p["targets"])
        assert {m for m in metrics if re.search(rf"\b{m}\b", text)} == metrics, title


def test_every_expression_uses_only_exported_metrics_and_labels() -> None:
    found = expressions()
    assert len(found) > 20
    problems = {expr: promql_problems(as_promql(expr)) for expr in found}
    assert {expr: found for expr, found in problems.items() if found} == {}
    # And every family the daemon exports is on the dashboard.
    text = " ".join(found)
    missing = {
        family.query_name
        for family in exported().values()
        if not family.name.endswith("_created") and family.query_name not in text
    }
    assert missing == set()


RANGE_FUNCTIONS = frozenset({"rate", "irate", "increase"})
"""What a panel may show of a counter: how much it rose, never the count since a restart."""


def raw_counters(expr: str) -> list[str]:
    """The ``_total`` counters an expression reads outside rate(), irate() and increase()."""
    counters = {name for name, f in sample_names().items() if f.type == "counter"}
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    found = []
    for match in re.finditer(r"\b[a-z_:][a-z0-9_:]*_total\b", text):
        if match.group() not in counters:
            continue
        # The innermost call around the counter: the first "(" left open before it.
        depth, at = 0, match.start() - 1
        while at >= 0 and not (text[at] == "(" and depth == 0):
            depth += {")": 1, "(": -1}.get(text[at], 0)
            at -= 1
        call = re.search(r"(\w+)\s*$", text[: max(at, 0)])
        if at < 0 or call is None or call.group(1) not in RANGE_FUNCTIONS:
            found.append(match.group())
    return found


def test_raw_counters_finds_a_counter_outside_rate_and_increase() -> None:
    assert raw_counters("sum by (pool) (jackpotd_hits_total)") == ["jackpotd_hits_total"]
    assert raw_counters('jackpotd_hits_total{pool=~"a(b)"} > 0') == ["jackpotd_hits_total"]
    assert raw_counters('sum(increase(jackpotd_hits_total{x="y"}[$__range]))') == []
    assert raw_counters("sum by (le) (rate(jackpotd_journal_commit_seconds_bucket[1m]))") == []
    assert raw_counters("x unless jackpotd_hits_total offset 5m") == ["jackpotd_hits_total"]


def test_no_panel_shows_a_raw_counter() -> None:
    """A counter starts again at 0 when the controller restarts: panels show how much it rose.

    Every counter's series exist from the start (docs/metrics.md), so increase() counts the
    first event too, and a new series need not be added by hand.
    """
    shown = [target["expr"] for panel in panels() for target in panel["targets"]]
    shown += [a["expr"] for a in dashboard()["annotations"]["list"] if "expr" in a]
    assert {expr: raw_counters(expr) for expr in shown if raw_counters(expr)} == {}


def test_the_hit_panels_count_the_hits_of_the_dashboards_time_range() -> None:
    hit_panels = [
        panel
        for panel in panels()
        if any("jackpotd_hits_total" in target["expr"] for target in panel["targets"])
    ]
    assert {panel["title"] for panel in hit_panels} == {"Hits", "Hits by table and line"}
    for panel in hit_panels:
        for target in panel["targets"]:
            assert re.search(
                r"increase\(jackpotd_hits_total\{[^}]*\}\[\$__range\]\)", target["expr"]
            )
            assert target["instant"] is True, panel["title"]


def test_titles_use_the_words_of_the_floor() -> None:
    """A pay is any amount won; a hit is a jackpot won (a pay from a meter); never "payout"."""
    words = [panel["title"] + " " + panel.get("description", "") for panel in dashboard()["panels"]]
    words += [panel["title"] + " " + panel["description"] for panel in panels()]
    words += [a["name"] for a in dashboard()["annotations"]["list"]]
    assert [text for text in words if re.search(r"(?i)payout|progressive hit", text)] == []


def test_every_expression_parses(tmp_path: Path) -> None:
    rules = tmp_path / "dashboard-rules.yml"
    lines = ["groups:", "  - name: dashboard", "    rules:"]
    for index, expr in enumerate(expressions()):
        lines += [
            f"      - record: dashboard:expression_{index}",
            f"        expr: {json.dumps(as_promql(expr))}",
        ]
    rules.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = promtool("check", "rules", rules)
    assert f"SUCCESS: {len(expressions())} rules found" in result.stdout


def test_the_lab_provisions_the_dashboard_and_the_prometheus_data_source() -> None:
    grafana = compose()["services"]["grafana"]
    mounts = {target: source for source, target in bind_mounts(grafana)}
    assert mounts["/etc/grafana/provisioning"] == "./grafana/provisioning"
    (provider,) = load_yaml(PROVISIONING / "dashboards" / "jackpotd.yml")["providers"]
    folder = provider["options"]["path"]
    dashboards = {t: s for t, s in mounts.items() if t.startswith(f"{folder}/")}
    assert dashboards == {f"{folder}/jackpotd.json": "./grafana/jackpotd-dashboard.json"}
    (source,) = load_yaml(PROVISIONING / "datasources" / "prometheus.yml")["datasources"]
    assert source["type"] == "prometheus"
    assert source["url"] == "http://prometheus:9090"
    assert "prometheus" in compose()["services"]
    # The dashboard asks for a Prometheus data source rather than naming one.
    (choice,) = [v for v in dashboard()["templating"]["list"] if v["type"] == "datasource"]
    assert (choice["name"], choice["query"]) == ("datasource", "prometheus")
