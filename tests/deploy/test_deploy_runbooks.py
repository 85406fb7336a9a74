"""Every alert links to what to do: a ``runbook_url`` to its heading in docs/operations.md.

docs/operations.md, "Alerts", has one heading per alert of deploy/prometheus/alerts.yml; each
alert's ``runbook_url`` names that heading's anchor on the page as installed
(``file:///opt/jackpotd/share/doc/jackpotd/operations.md#<anchor>``, the base both files
document). A renamed heading or a new alert without one fails here, not on a night's page.
The rules still pass ``promtool check rules`` and their unit tests
(tests/deploy/test_deploy_prometheus.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
ALERTS = REPO / "deploy" / "prometheus" / "alerts.yml"
OPERATIONS = REPO / "docs" / "operations.md"
BASE = "file:///opt/jackpotd/share/doc/jackpotd/operations.md#"


def anchor(heading: str) -> str:
    """A heading's anchor as a Markdown renderer makes it (GitHub's rule)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def headings() -> set[str]:
    """The anchors of every heading of docs/operations.md (outside code blocks)."""
    found, fenced = set(), False
    for line in OPERATIONS.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"#{1,6} (.+)", line)):
            found.add(anchor(match.group(1)))
    return found


def runbooks() -> dict[str, str]:
    """Each alert's name and its ``runbook_url``."""
    document = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    return {
        rule["alert"]: rule["annotations"].get("runbook_url", "")
        for group in document["groups"]
        for rule in group["rules"]
        if "alert" in rule
    }


def test_every_alert_has_a_runbook_url_on_the_installed_docs() -> None:
    urls = runbooks()
    assert len(urls) >= 25
    assert {alert: url for alert, url in urls.items() if not url.startswith(BASE)} == {}
    assert {alert for alert, url in urls.items() if url != BASE + alert.lower()} == set()


def test_each_runbook_anchor_is_a_heading_of_the_operations_page() -> None:
    anchors = headings()
    missing = {alert: url for alert, url in runbooks().items() if url[len(BASE) :] not in anchors}
    assert missing == {}


def test_the_base_of_the_links_is_documented_where_they_are_read() -> None:
    assert BASE.removesuffix("#") in ALERTS.read_text(encoding="utf-8")
    page = OPERATIONS.read_text(encoding="utf-8")
    alerts = page[page.index("### Alerts") : page.index("## The lab stack")]
    assert BASE.removesuffix("operations.md#") in alerts
