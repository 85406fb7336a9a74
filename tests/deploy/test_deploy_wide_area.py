"""deploy/wide-area/lab: its files load as documented; central's broker confines each property.

make-lab.sh makes the lab in a test folder (tests/support/widearea/wide_area_lab.py): its secrets,
the three controller keys exchanged, the files installed. The controllers' files load with the
controller's own loader; central's mosquitto runs its installed configuration and ACL, and is
attacked by a property holding valid credentials (the threat model of docs/security.md: such
a device is hostile). Mosquitto drops a forbidden publish without a word to an MQTT 3.1.1
client, so absence is proven with a sentinel, as tests/deploy/test_deploy_mosquitto.py does: a
forbidden publish is followed by an allowed one from the same client, and a reader that may
read everything (``monitor``) must see the sentinel and nothing forbidden before it.
tests/deploy/test_deploy_wide_area_lab.py runs the whole lab.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

import aiomqtt
import pytest
from support.drivers.shipped_broker import (
    IN_USER,
    OUT_USER,
    Credentials,
    connect,
    directives,
    publish,
    refused,
    start_warnings,
    subscribe,
)
from support.widearea.wide_area_lab import (
    CENTRAL_PORT,
    CONTROLLERS,
    KIT,
    LAB,
    SITES,
    InstalledLab,
    make_lab,
    shipped,
    start_central_broker,
)

from controller.config.load import load_config
from controller.config.wide_area_settings import WideAreaCentral, WideAreaProperty
from drivers.mqtt.settings import BrokerSettings
from drivers.mqtt.topics import Topics

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from support.drivers.mosquitto import Broker
    from support.drivers.mqtt_watch import Watch

CENTRAL_SITE = "hub"
TOPICS = Topics(CENTRAL_SITE)
POOL = "mega"
ATLANTIC, BOARDWALK = SITES
FORGED = b"forged"


def user(site: str) -> str:
    """A property's user at central's broker: its uplink's client id."""
    return f"site-{site}"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> InstalledLab:
    installed, made = make_lab(tmp_path_factory.mktemp("wide-area-lab"))
    assert made.returncode == 0, made.stderr
    assert made.stderr == "", "make-secrets.sh names a user the ACL has no block for"
    return installed


@pytest.fixture(scope="module")
def central_broker(tmp_path_factory: pytest.TempPathFactory, lab: InstalledLab) -> Iterator[Broker]:
    running = start_central_broker(lab, tmp_path_factory.mktemp("central-broker"))
    try:
        yield running
    finally:
        running.close()


# The configurations.


def test_central_owns_the_pool_and_links_both_properties_by_their_exchanged_keys(
    lab: InstalledLab,
) -> None:
    config = load_config(lab.config("central"))
    assert config.controller.site == CENTRAL_SITE
    assert [pool.pool_id for pool in config.pools] == [POOL]
    settings = config.wide_area
    assert isinstance(settings, WideAreaCentral)
    assert [(site.site, site.pools) for site in settings.sites] == [
        (site, (POOL,)) for site in SITES
    ]
    for site in settings.sites:
        assert site.public_key == lab.public_key(site.site)
    # The table that carries the pool's paytable for the ledger: no device speaks for it.
    (house,) = config.tables
    assert (house.event.pool_id, str(house.transport)) == (POOL, "mqtt")
    assert house.event.progressive == config.pools[0].paytable.name
    # Central's own controller reaches its broker over TLS, as a user per connection.
    central_broker = config.settings("broker")
    assert (central_broker.port, central_broker.username, central_broker.out_username) == (
        CENTRAL_PORT,
        IN_USER,
        OUT_USER,
    )
    assert central_broker.tls is not None


@pytest.mark.parametrize("site", SITES)
def test_each_property_plays_centrals_pool_on_simulated_tables_over_tls_with_its_own_user(
    lab: InstalledLab, site: str
) -> None:
    config = load_config(lab.config(site))
    settings = config.wide_area
    assert isinstance(settings, WideAreaProperty)
    assert (settings.site, settings.central_site) == (site, CENTRAL_SITE)
    assert settings.central_key == lab.public_key("central")
    central = load_config(lab.config("central"))
    assert settings.pools == {POOL: central.pools[0].paytable.name}
    local = [pool.pool_id for pool in config.pools]
    assert POOL not in local, "the wide-area pool is central's, never a local one"
    playing = [table for table in config.tables if table.event.pool_id == POOL]
    assert playing
    assert {str(table.transport) for table in config.tables} == {"simulator"}
    link = settings.central
    assert isinstance(link, BrokerSettings)
    assert (link.port, link.username, link.client_id) == (CENTRAL_PORT, user(site), user(site))
    tls = link.tls
    assert tls is not None
    assert tls.cert_file is not None
    assert tls.cert_file.endswith(f"clients/{user(site)}.crt")
    assert not tls.insecure_skip_hostname_check
    # Its own broker is not central's: its meters and signs are on its floor.
    assert config.settings("broker").port != CENTRAL_PORT


def test_the_shipped_files_are_what_make_lab_installs(lab: InstalledLab) -> None:
    for name in CONTROLLERS:
        assert lab.config(name).read_text() == (LAB / name / "jackpotd.toml").read_text()
        controller = shipped(name)["controller"]
        assert isinstance(controller, dict)
        assert controller["site"] == (CENTRAL_SITE if name == "central" else name)
    assert (lab.directory / "central" / "acl").read_text() == (LAB / "central" / "acl").read_text()
    conf = (lab.directory / "central" / "mosquitto.conf").read_text()
    assert "/var/lib/jackpotd-wide-area-lab" not in conf
    assert f"acl_file {lab.directory}/central/acl" in conf


def test_running_make_lab_again_keeps_every_key(lab: InstalledLab) -> None:
    before = {name: lab.public_key(name) for name in CONTROLLERS}
    passwords = {site: lab.credentials.password(user(site)) for site in SITES}
    again, made = make_lab(lab.directory)
    assert made.returncode == 0, made.stderr
    assert {name: again.public_key(name) for name in CONTROLLERS} == before
    assert {site: again.credentials.password(user(site)) for site in SITES} == passwords
    for site in SITES:
        assert (lab.directory / site / "central.pub").read_text().strip() == before["central"]
        at_central = lab.directory / "central" / "sites" / f"{site}.pub"
        assert at_central.read_text().strip() == before[site]
    assert "at central as" in made.stdout, "it prints where the public keys are"


def test_the_readme_names_every_user_script_alert_and_command() -> None:
    readme = (KIT / "README.md").read_text(encoding="utf-8")
    acl = directives((LAB / "central" / "acl").read_text(encoding="utf-8"))
    users = {value for key, value in acl if key == "user"}
    words = [*users, "make-lab.sh", "lab.sh", "jackpotd config approve", "jackpotd report sites"]
    words += ["JackpotdWideAreaClosed", "JackpotdSiteSilent", "JackpotdSiteHalted"]
    for word in words:
        assert word in readme, word


# Central's broker: its files load as written.


def test_centrals_broker_loads_its_lab_configuration_and_acl_without_warnings(
    lab: InstalledLab, tmp_path: Path
) -> None:
    central_broker = start_central_broker(lab, tmp_path / "broker")

    async def answered() -> None:
        async with connect(central_broker, lab.credentials, "monitor", "monitor-log"):
            pass

    asyncio.run(answered())  # the broker is in its main loop (test_deploy_mosquitto_log.py)
    central_broker.stop()
    log = central_broker.log()
    assert "Config loaded from" in log, log
    assert "Opening ipv4 listen socket" in log, log
    as_root = ["Warning: Mosquitto should not be run as root/administrator."]
    assert start_warnings(log) == (as_root if os.geteuid() == 0 else [])


def test_every_topic_of_the_acl_is_under_centrals_site_and_no_line_is_a_pattern() -> None:
    acl = directives((LAB / "central" / "acl").read_text(encoding="utf-8"))
    assert not [value for key, value in acl if key == "pattern"]
    topics = [value.split()[-1] for key, value in acl if key == "topic"]
    assert topics
    assert all(topic.startswith((TOPICS.prefix, "$SYS/")) for topic in topics)


# Central's broker: a property holding valid credentials is confined to its own link.


async def watch_everything(monitor: Watch) -> None:
    assert await subscribe(monitor, f"{TOPICS.prefix}#") == [True]


def test_a_property_cannot_publish_on_another_propertys_chain_or_status(
    central_broker: Broker, lab: InstalledLab
) -> None:
    own, sentinel = TOPICS.site_up(ATLANTIC), TOPICS.site_status(ATLANTIC)

    async def scenario() -> None:
        async with (
            connect(central_broker, lab.credentials, "monitor", "monitor-chains") as monitor,
            connect(central_broker, lab.credentials, IN_USER, "central-in-chains") as central,
        ):
            await watch_everything(monitor)
            assert await subscribe(central, TOPICS.site_up_filter) == [True]
            async with connect(
                central_broker, lab.credentials, user(ATLANTIC), "forger"
            ) as atlantic:
                await publish(atlantic, own, b"own")
                for topic in (
                    TOPICS.site_up(BOARDWALK),
                    TOPICS.site_status(BOARDWALK),
                    f"{TOPICS.prefix}wide/{ATLANTIC}/up/extra",
                    f"{TOPICS.prefix}wide/{ATLANTIC}/totals",
                ):
                    await publish(atlantic, topic, FORGED, retain=True)
                await publish(atlantic, sentinel, b"sentinel")
            assert await monitor.until_live(sentinel, b"sentinel") == [(own, b"own")]
            await central.until(lambda w: (own, b"own") in w.live(), "atlantic's own chain")
            assert central.live() == [(own, b"own")]

    asyncio.run(scenario())


def test_a_property_cannot_write_centrals_acks_awards_meters_or_status(
    central_broker: Broker, lab: InstalledLab
) -> None:
    sentinel = TOPICS.site_up(ATLANTIC)

    async def scenario() -> None:
        async with (
            connect(central_broker, lab.credentials, "monitor", "monitor-central") as monitor,
            connect(central_broker, lab.credentials, user(BOARDWALK), "victim") as boardwalk,
        ):
            await watch_everything(monitor)
            assert await subscribe(
                boardwalk, TOPICS.site_ack(BOARDWALK), TOPICS.site_award(BOARDWALK)
            ) == [True, True]
            async with connect(
                central_broker, lab.credentials, user(ATLANTIC), "forger-2"
            ) as atlantic:
                for topic in (
                    TOPICS.site_ack(ATLANTIC),  # its own answers come from central only
                    TOPICS.site_award(ATLANTIC),
                    TOPICS.site_ack(BOARDWALK),
                    TOPICS.site_award(BOARDWALK),
                    TOPICS.meter(POOL),
                    TOPICS.hit(POOL),
                    TOPICS.controller_status("central-1"),
                    TOPICS.controller_checkpoint("central-1"),
                    TOPICS.table_event("house", "bet"),
                    TOPICS.table_command("house", "state"),
                ):
                    await publish(atlantic, topic, FORGED, retain=True)
                await publish(atlantic, sentinel, b"sentinel")
            assert await monitor.until_live(sentinel, b"sentinel") == []
            assert boardwalk.live() == []
        # Nothing forged was retained: a new reader gets the retained topics, then the sentinel.
        async with (
            connect(central_broker, lab.credentials, "monitor", "monitor-retained") as late,
            connect(central_broker, lab.credentials, user(ATLANTIC), "sentinel") as atlantic,
        ):
            await watch_everything(late)
            await publish(atlantic, sentinel, b"sentinel")
            await late.until_live(sentinel, b"sentinel")
            assert all(message.payload != FORGED for message in late.messages)

    asyncio.run(scenario())


def test_a_property_cannot_read_another_propertys_chain_acks_or_awards(
    central_broker: Broker, lab: InstalledLab
) -> None:
    sentinel = TOPICS.site_ack(ATLANTIC)

    async def scenario() -> None:
        async with (
            connect(central_broker, lab.credentials, user(ATLANTIC), "reader") as atlantic,
            connect(central_broker, lab.credentials, user(BOARDWALK), "other") as boardwalk,
            connect(central_broker, lab.credentials, IN_USER, "central-in-reader") as central,
        ):
            # A subscription beyond the ACL is granted and receives nothing from beyond it.
            await subscribe(
                atlantic,
                f"{TOPICS.prefix}#",
                f"{TOPICS.prefix}wide/+/ack",
                f"{TOPICS.prefix}wide/{BOARDWALK}/#",
            )
            await publish(boardwalk, TOPICS.site_up(BOARDWALK), b"boardwalk's chain")
            await publish(boardwalk, TOPICS.site_status(BOARDWALK), b"online")
            await publish(central, TOPICS.site_ack(BOARDWALK), b"boardwalk's ack")
            await publish(central, TOPICS.site_award(BOARDWALK), b"boardwalk's award")
            await publish(central, sentinel, b"sentinel")
            assert await atlantic.until_live(sentinel, b"sentinel") == []

    asyncio.run(scenario())


def test_one_property_cannot_log_in_as_the_other(central_broker: Broker, lab: InstalledLab) -> None:
    atlantic = user(ATLANTIC)

    async def scenario() -> None:
        for password in (
            lab.credentials.password(user(BOARDWALK)),
            lab.credentials.password(IN_USER),
        ):
            refusal = await refused(central_broker, lab.credentials, atlantic, password=password)
            assert "authorized" in refusal

    asyncio.run(scenario())


def test_central_reads_every_chain_answers_each_property_and_its_meters_reach_them(
    central_broker: Broker, lab: InstalledLab
) -> None:
    # Each property connects as its uplink does: its last will "offline" on its own status
    # (a will the ACL refused would refuse the connection).
    wills = {
        site: aiomqtt.Will(TOPICS.site_status(site), b"offline", qos=1, retain=True)
        for site in SITES
    }
    meter = TOPICS.meter(POOL)

    async def scenario(credentials: Credentials) -> None:
        async with (
            connect(central_broker, credentials, IN_USER, "central-in") as central,
            connect(central_broker, credentials, OUT_USER, "central-out") as meters,
            connect(
                central_broker, credentials, user(ATLANTIC), "a", will=wills[ATLANTIC]
            ) as atlantic,
            connect(
                central_broker, credentials, user(BOARDWALK), "b", will=wills[BOARDWALK]
            ) as boardwalk,
        ):
            assert await subscribe(central, TOPICS.site_up_filter) == [True]
            for site, watch in ((ATLANTIC, atlantic), (BOARDWALK, boardwalk)):
                assert await subscribe(
                    watch, TOPICS.site_ack(site), TOPICS.site_award(site), meter
                ) == [True, True, True]
                await publish(watch, TOPICS.site_up(site), site.encode())
            await central.until(
                lambda w: len(w.live()) == len(SITES), "both properties' chains at central"
            )
            assert sorted(central.live()) == [(TOPICS.site_up(s), s.encode()) for s in SITES]
            for site in SITES:
                await publish(central, TOPICS.site_ack(site), b"ack " + site.encode())
                await publish(central, TOPICS.site_award(site), b"award " + site.encode())
            await publish(meters, meter, b"meter", retain=True)
            for site, watch in ((ATLANTIC, atlantic), (BOARDWALK, boardwalk)):
                await watch.until_live(meter, b"meter")
                assert watch.live() == [
                    (TOPICS.site_ack(site), b"ack " + site.encode()),
                    (TOPICS.site_award(site), b"award " + site.encode()),
                    (meter, b"meter"),
                ]

    asyncio.run(scenario(lab.credentials))
