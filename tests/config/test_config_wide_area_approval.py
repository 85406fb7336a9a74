"""``[wide_area]`` at start-up: joined and linked once, and only by a manager's approval.

controller/config/changes.py, controller/config/approval.py; docs/wide-area.md,
"Configuration". A property's file becomes one ``WideAreaJoined`` journaled before the tables
that play central's pool; central's one ``SiteLinked`` per property, after the pool and the
table whose paytable judges the property's hits. Starting again with the same file journals
nothing new. On a signed journal (docs/security.md) neither takes effect without a manager's
signed approval of the configuration: on its own, "by config", it is refused, as is an approval
a supervisor signed or one altered after the manager signed it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
import pytest
from support.config_files import load
from support.ledger.approvals import Site
from support.widearea.wide_area_config import (
    ATLANTIC,
    BOARDWALK,
    CENTRAL,
    CENTRAL_KEY,
    PROPERTY,
    SITE_KEY,
    edit,
)

from controller.config.approval import configuration_approval
from controller.config.changes import config_events
from controller.config.load import ConfigError
from controller.events import ConfigurationApproved, PoolOpened, TableConfigured
from controller.ledger.apply import LedgerState, apply
from controller.ledger_journal.sqlite import Journal
from controller.security.controller_key import ControllerKey
from controller.service.startup_checks import AuthorityPolicy, StartupError
from controller.service.wiring import build_runtime
from controller.wide_events import SiteLinked, WideAreaJoined

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from controller.config.load import Config
    from controller.events import AnyEvent

AT = "2026-03-01T12:00:00.000Z"
OUTSIDE = "a configuration change takes effect only inside a manager's signed configuration"
JOURNAL = 'journal = "journal.db"\n'

pytestmark = pytest.mark.usefixtures("wide_area_files")


def property_config(folder: Path, text: str = PROPERTY) -> Config:
    return load(folder, edit(text, 'id = "c1"\n', f'id = "c1"\n{JOURNAL}'))


def central_config(folder: Path, text: str = CENTRAL) -> Config:
    return load(folder, edit(text, 'id = "central-1"\n', f'id = "central-1"\n{JOURNAL}'))


def applied(state: LedgerState, events: Sequence[AnyEvent]) -> LedgerState:
    for event in events:
        state, _ = apply(state, event)
    return state


def start(config: Config, *, signed: bool = False) -> LedgerState:
    """The daemon's start-up on ``config`` (build_runtime); the ledger's state after it."""
    policy = AuthorityPolicy(require_signed=signed)
    runtime = build_runtime(config, authority=policy, key=ControllerKey.generate())
    state = runtime.journal.state
    runtime.journal.close()
    return state


def kinds(folder: Path) -> list[str]:
    with Journal(folder / "journal.db") as journal:
        return [str(row["kind"]) for row in journal.rows()]


# -- the events -----------------------------------------------------------------------------------


def test_a_property_joins_central_before_its_tables_play_centrals_pool(tmp_path: Path) -> None:
    config = property_config(tmp_path)
    events = config_events(config, LedgerState(), AT)
    assert [type(event) for event in events] == [
        WideAreaJoined,
        PoolOpened,
        TableConfigured,
        TableConfigured,
    ]
    joined = events[0]
    assert isinstance(joined, WideAreaJoined)
    assert (joined.site, joined.central_key, joined.pools, joined.by) == (
        "atlantic",
        CENTRAL_KEY,
        {"mega": "progressive-2"},
        "config",
    )
    state = applied(LedgerState(), events)  # in this order the ledger takes them all
    assert state.chain is not None
    assert (state.chain.site, state.chain.pools) == ("atlantic", {"mega": "progressive-2"})
    assert config_events(config, state, "later") == []


def test_a_property_joins_again_on_each_change_of_centrals_key_and_keeps_its_chain(
    tmp_path: Path,
) -> None:
    first = property_config(tmp_path)
    other = ControllerKey.generate().public_key
    second = property_config(tmp_path, PROPERTY.replace(CENTRAL_KEY, other))
    state = applied(LedgerState(), config_events(first, LedgerState(), AT))
    ids = []
    for n, config in enumerate([second, first, second], start=1):  # a key changed, back, again
        (event,) = config_events(config, state, f"2026-03-0{n + 1}T12:00:00.000Z")
        assert isinstance(event, WideAreaJoined)
        ids.append(event.event_id)
        state = applied(state, [event])
        assert state.chain is not None
        assert state.chain.central_key == (other if config is second else CENTRAL_KEY)
    assert len(set(ids)) == 3  # each change is journaled, none taken for a duplicate


def test_another_site_on_a_propertys_journal_stops_the_start(tmp_path: Path) -> None:
    state = applied(LedgerState(), config_events(property_config(tmp_path), LedgerState(), AT))
    renamed = property_config(tmp_path, edit(PROPERTY, 'site = "atlantic"', 'site = "harbor"'))
    with pytest.raises(ConfigError) as refused:
        config_events(renamed, state, AT)
    assert refused.value.key == "wide_area.site"
    assert "this journal's property is site 'atlantic' to central, not 'harbor'" in str(
        refused.value
    )


def test_central_links_each_property_after_the_pool_and_the_table_carrying_its_paytable(
    tmp_path: Path,
) -> None:
    config = central_config(tmp_path)
    events = config_events(config, LedgerState(), AT)
    assert [type(event) for event in events] == [
        PoolOpened,
        TableConfigured,
        SiteLinked,
        SiteLinked,
    ]
    links = [event for event in events if isinstance(event, SiteLinked)]
    assert [(link.site, link.public_key, link.pools, link.by) for link in links] == [
        ("atlantic", SITE_KEY, ["mega"], "config"),
        ("boardwalk.2", BOARDWALK.public_key, ["mega"], "config"),
    ]
    state = applied(LedgerState(), events)
    assert set(state.sites) == {"atlantic", "boardwalk.2"}
    table = events[1]
    assert isinstance(table, TableConfigured)
    assert state.sites["atlantic"].paytables == {"mega": table.paytables["progressive-2"]}
    assert config_events(config, state, "later") == []


def test_only_the_property_whose_key_changed_is_linked_again(tmp_path: Path) -> None:
    state = applied(LedgerState(), config_events(central_config(tmp_path), LedgerState(), AT))
    replaced = ControllerKey.generate().public_key
    (tmp_path / "sites" / "boardwalk.pub").write_text(replaced, encoding="utf-8")
    (event,) = config_events(central_config(tmp_path), state, "later")
    assert isinstance(event, SiteLinked)
    assert (event.site, event.public_key) == ("boardwalk.2", replaced)
    state = applied(state, [event])
    assert state.sites["boardwalk.2"].public_key == replaced
    assert state.sites["atlantic"].public_key == ATLANTIC.public_key


# -- start-up -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "kind", "count"), [("property", "wide-area-joined", 1), ("central", "site-linked", 2)]
)
def test_an_unsigned_start_journals_the_link_once(
    tmp_path: Path, role: str, kind: str, count: int
) -> None:
    config = property_config(tmp_path) if role == "property" else central_config(tmp_path)
    first = start(config)
    assert kinds(tmp_path).count(kind) == count
    assert first.chain is not None or len(first.sites) == count
    again = start(config)  # the same file again: nothing new
    assert kinds(tmp_path).count(kind) == count
    assert (again.chain, again.sites) == (first.chain, first.sites)


def test_a_signed_property_joins_central_only_with_a_managers_approval(tmp_path: Path) -> None:
    config = property_config(tmp_path)
    with Journal(tmp_path / "journal.db") as journal:
        site = Site.create(journal)
    with pytest.raises(StartupError, match="no manager has approved it"):
        start(config, signed=True)
    assert "wide-area-joined" not in kinds(tmp_path)
    with Journal(tmp_path / "journal.db") as journal:
        assert journal.state.chain is None
        site.journal = journal
        receipt = site.approve(config)
        assert receipt is not None
        assert receipt.applied
    state = start(config, signed=True)
    assert state.chain is not None
    assert (state.chain.site, state.chain.central_key) == ("atlantic", CENTRAL_KEY)
    start(config, signed=True)  # the same file again: approved already, nothing new
    assert kinds(tmp_path).count("configuration-approved") == 1


def test_a_signed_central_links_properties_only_with_a_managers_approval(tmp_path: Path) -> None:
    config = central_config(tmp_path)
    with Journal(tmp_path / "journal.db") as journal:
        site = Site.create(journal)
        approval = configuration_approval(config, journal.state, AT, "mgr")
        assert approval is not None
        assert [type(change) for change in approval.changes][-2:] == [SiteLinked, SiteLinked]
        site.append(site.sign(approval, "mgr"))
        assert set(journal.state.sites) == {"atlantic", "boardwalk.2"}
    state = start(config, signed=True)
    assert set(state.sites) == {"atlantic", "boardwalk.2"}


# -- attacks --------------------------------------------------------------------------------------


def test_a_link_by_config_outside_an_approval_is_refused_on_a_signed_journal(
    tmp_path: Path,
) -> None:
    """Whoever can write the journal cannot join the property to a central of their own."""
    rogue = ControllerKey.generate().public_key
    with Journal(tmp_path / "journal.db") as journal:
        Site.create(journal)
        joined = WideAreaJoined(
            "rogue-join", AT, "atlantic", rogue, {"mega": "progressive-2"}, "config"
        )
        linked = SiteLinked("rogue-link", AT, "rogue", rogue, ["mega"], "config")
        for event in (joined, linked):
            receipt = journal.append(event)
            assert not receipt.applied
            assert OUTSIDE in receipt.reason
        assert journal.state.chain is None
        assert not journal.state.sites


def test_an_approval_a_supervisor_signed_or_altered_after_signing_is_refused(
    tmp_path: Path,
) -> None:
    config = property_config(tmp_path)
    rogue = ControllerKey.generate().public_key
    with Journal(tmp_path / "journal.db") as journal:
        site = Site.create(journal)
        approval = configuration_approval(config, journal.state, AT, "sup1")
        assert approval is not None
        by_supervisor = journal.append(site.sign(approval, "sup1"))
        assert not by_supervisor.applied
        assert "may not approve-config" in by_supervisor.reason
        signed = site.sign(
            msgspec.structs.replace(approval, event_id="approval-2", by="mgr"), "mgr"
        )
        join = signed.changes[0]
        assert isinstance(join, WideAreaJoined)
        swapped = [msgspec.structs.replace(join, central_key=rogue), *signed.changes[1:]]
        altered = msgspec.structs.replace(signed, changes=swapped)
        assert isinstance(altered, ConfigurationApproved)
        receipt = journal.append(altered)
        assert not receipt.applied
        assert "does not verify" in receipt.reason
        assert journal.state.chain is None
