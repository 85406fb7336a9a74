"""Central holds a property to its high-water mark: history cannot go back past central's copy.

docs/security.md, "History never goes back". The property's uplink sends central each signed
head it makes (drivers/mqtt/site_uplink.py), central keeps the highest valid one per property in
a file that survives its restart (controller/runtime/site_links.py), and a property that starts
asks for it with a hello of its own and a bounded wait (controller/runtime/central_head.py,
drivers/mqtt/central_mark.py): the journal is held to the highest of the high-water file's, the
broker's retained copy and central's. All on a real mosquitto, with central's real MQTT source
and the property's real uplink, each on its own real journal
(tests/support/widearea/site_link_rig.py).
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import uuid
from typing import TYPE_CHECKING, Any

import aiomqtt
import msgspec
import pytest
from support.drivers.mqtt_tables import TOPICS, running, settings_for, within
from support.journal.journal_rig import AT
from support.polls import until
from support.runtime.floor import WAIT_S, free_port
from support.widearea.site_link_rig import SITE, Link

from controller.config.load import parse_config
from controller.events import FaultRecorded
from controller.journal.high_water import (
    HighWaterFileError,
    read_site_heads,
    sign_head,
)
from controller.ledger_journal.sqlite import Journal
from controller.runtime.central_head import MarkQuestion, ask_central
from controller.runtime.checkpointing import (
    CheckpointSchedule,
    StoredStateError,
    resume_checkpoints,
)
from controller.runtime.head_signing import HeadSigning
from controller.runtime.heads import HeadSchedule, central_marks, published_marks
from controller.runtime.site_links import JournalSiteLinks
from controller.security.controller_key import ControllerKey
from controller.service.startup_checks import StartupError
from controller.service.wiring import build_runtime
from controller.widearea.messages import CentralMark, canonical, decode_up, signed_bytes
from drivers.mqtt.central_mark import central_mark
from drivers.mqtt.published_head import published_head

if TYPE_CHECKING:
    from pathlib import Path

    from support.drivers.mosquitto import Broker

    from controller.outputs import SignedHead

BROKER_HEAD = TOPICS.controller_head(SITE)
"""Where the property's own sink retains its heads (``controller/<id>/head``)."""


def rows(journal: Journal, count: int) -> int:
    """Journal ``count`` rows at the property; its head row."""
    for _ in range(count):
        fault = FaultRecorded(f"fault-{uuid.uuid4()}", AT, "test", "row")
        assert journal.append(fault).applied
    return journal.head[0]


def schedule(link: Link, folder: Path) -> HeadSchedule:
    """The property's head schedule, its file beside its journal, each head sent to central."""
    heads = HeadSchedule(link.site_key, SITE, folder / "site.db.high-water")
    heads.on_signed.append(link.chain.head_signed)
    return heads


async def sign(heads: HeadSchedule, journal: Journal) -> SignedHead:
    """A head of the journal signed as the sequencer signs it (its hooks run)."""
    signing = HeadSigning(
        heads, journal, lambda: AT,
        publish=lambda _update: None, went_back=pytest.fail, may_sign=lambda: True,
    )  # fmt: skip
    await signing.step(closing=True)
    assert heads.last is not None
    return heads.last


def at_start(link: Link, folder: Path, journal: Journal, central: SignedHead | None) -> None:
    """The start-up check as the service runs it: the highest of the three marks must hold.

    The high-water file's (checked), central's (checked: controller/service/wiring.py) and
    the broker's retained copy read back from the real broker, then the start-up check.
    """
    heads = HeadSchedule(link.site_key, SITE, folder / "site.db.high-water")
    heads.resume()
    heads.raise_to(central_marks(central, link.site_key))
    retained = asyncio.run(published_head(settings_for(link.port), SITE))
    heads.raise_to(published_marks([retained] if retained else [], link.site_key))
    resume_checkpoints(journal, CheckpointSchedule(link.site_key, SITE), AT, None, heads.last)


def ask(link: Link, port: int | None = None) -> tuple[MarkQuestion, SignedHead | None]:
    """The property's question to central at its start, over the real broker."""
    question = MarkQuestion(SITE, link.site_key, link.central_key.public_key)
    settings = settings_for(link.port if port is None else port)
    return question, asyncio.run(ask_central(question, settings, settings.site))


async def retain(broker: Broker, topic: str, payload: bytes) -> None:
    async with aiomqtt.Client(broker.host, broker.port) as client:
        await client.publish(topic, payload, qos=1, retain=True)


def test_history_never_goes_back_a_journal_its_file_and_the_brokers_copy_rolled_back_are_refused_by_centrals_mark(  # noqa: E501
    tmp_path: Path, mosquitto: Broker
) -> None:
    link = Link(tmp_path, mosquitto.port)
    marks = tmp_path / "central.site-heads"
    link.links = JournalSiteLinks(link.central, link.central_key, 0.2, marks)
    heads = schedule(link, tmp_path)
    backup = tmp_path / "backup"
    backup.mkdir()

    async def played() -> int:
        rows(link.site, 3)
        await sign(heads, link.site)
        with (
            sqlite3.connect(tmp_path / "site.db") as source,
            sqlite3.connect(backup / "site.db") as copy,
        ):
            source.backup(copy)  # a back-up as an operator takes one
        shutil.copy(tmp_path / "site.db.high-water", backup / "site.db.high-water")
        async with link.linked():
            rows(link.site, 5)  # acknowledged, signed and sent: then rolled back
            head = await sign(heads, link.site)
            signed = head.seq
            await retain(mosquitto, BROKER_HEAD, msgspec.json.encode(head))
            await within(
                until(lambda: SITE in read_site_heads(marks)),
                "central keeping the property's head",
            )
            await within(
                until(lambda: read_site_heads(marks)[SITE].seq == signed),
                f"central keeping the head of row {signed}",
            )
        return signed

    signed = asyncio.run(played())
    link.site.close()
    for name in ("site.db", "site.db.high-water"):
        (tmp_path / name).unlink()
        shutil.copy(backup / name, tmp_path / name)
    for leftover in ("site.db-wal", "site.db-shm"):
        (tmp_path / leftover).unlink(missing_ok=True)
    asyncio.run(retain(mosquitto, BROKER_HEAD, b""))  # the broker's retained copy wiped
    assert asyncio.run(published_head(settings_for(mosquitto.port), SITE)) is None

    # Central restarted: it answers from the file it kept, under the new hello's nonce.
    link.links = JournalSiteLinks(link.central, link.central_key, 0.2, marks)

    async def restarted_central_answers() -> tuple[MarkQuestion, SignedHead | None]:
        async with running(link.central_source().run(link.central_intake)):
            question = MarkQuestion(SITE, link.site_key, link.central_key.public_key)
            settings = settings_for(mosquitto.port)
            return question, await ask_central(question, settings, settings.site)

    question, mark = asyncio.run(restarted_central_answers())
    assert question.answer is not None
    assert question.refused == []
    assert mark is not None
    assert mark.seq == signed
    rolled_back = Journal(tmp_path / "site.db")
    assert rolled_back.head[0] < signed
    with pytest.raises(
        StoredStateError, match=f"the journal went back: the controller signed row {signed}"
    ):
        at_start(link, tmp_path, rolled_back, mark)
    # Without central's mark the same journal starts: the file and the broker went back with it.
    unheld = Journal(tmp_path / "site.db")
    at_start(link, tmp_path, unheld, None)
    unheld.close()
    link.central.close()


def test_central_unreachable_or_silent_never_refuses_the_start(
    tmp_path: Path, mosquitto: Broker
) -> None:
    link = Link(tmp_path, mosquitto.port)
    heads = schedule(link, tmp_path)
    rows(link.site, 2)
    asyncio.run(sign(heads, link.site))
    question, mark = ask(link, free_port())  # nothing listens there: central unreachable
    assert (question.answer, mark) == (None, None)
    at_start(link, tmp_path, link.site, mark)  # it starts on the file's mark
    # The broker up, central's source not running: no answer within the wait, and it starts.
    silent = MarkQuestion(SITE, link.site_key, link.central_key.public_key)
    settings = settings_for(mosquitto.port)
    answered = asyncio.run(
        central_mark(settings, settings.site, SITE, silent.hello(), silent.accept, timeout_s=1.0)
    )
    assert (answered, silent.answer) == (None, None)
    at_start(link, tmp_path, link.site, None)
    link.close()


async def answer_first(
    attacker: aiomqtt.Client, replayed: bytes, stranger: ControllerKey, higher: SignedHead
) -> None:
    """Answer the first hello heard on the property's topic: a captured answer, then a forgery."""
    async for message in attacker.messages:
        nonce: Any = getattr(decode_up(bytes(message.payload)), "nonce", None)
        if nonce is not None:
            forged = CentralMark(SITE, nonce, higher)
            forged = msgspec.structs.replace(forged, signature=stranger.sign(signed_bytes(forged)))
            await attacker.publish(TOPICS.site_mark(SITE), replayed, qos=1)
            await attacker.publish(TOPICS.site_mark(SITE), canonical(forged), qos=1)
            return


def test_an_answer_of_another_hello_or_not_centrals_is_refused_and_the_fresh_one_taken(
    tmp_path: Path, mosquitto: Broker
) -> None:
    link = Link(tmp_path, mosquitto.port)
    heads = schedule(link, tmp_path)
    rows(link.site, 2)
    genuine = asyncio.run(sign(heads, link.site))
    assert link.links.keep_head(SITE, genuine)
    # Captured: central's genuine answer to an earlier start, holding a higher head of the
    # property's (signed before a restore the managers accepted, say).
    higher = sign_head(link.site_key, SITE, "", (genuine.seq + 50, "ab" * 32), AT)
    earlier = JournalSiteLinks(link.central, link.central_key)
    assert earlier.keep_head(SITE, higher)
    replayed = canonical(earlier.mark_answer(SITE, "0" * 32))
    stranger = ControllerKey.generate()
    settings = settings_for(mosquitto.port)
    up = TOPICS.site_up(SITE)

    async def attacked(*, central: bool) -> MarkQuestion:
        """Someone on central's broker answers the start's hello first: a replay, a forgery.

        With ``central``, central's source (its session on the broker kept from an earlier
        run, as a restarted central's is) starts only once both were refused: it hears the
        hello then, and the start, still waiting, takes its answer.
        """
        async with aiomqtt.Client(mosquitto.host, mosquitto.port) as attacker:
            await attacker.subscribe(up, qos=1)
            question = MarkQuestion(SITE, link.site_key, link.central_key.public_key)

            answering = asyncio.create_task(answer_first(attacker, replayed, stranger, higher))
            asking = asyncio.create_task(
                central_mark(
                    settings, settings.site, SITE, question.hello(), question.accept,
                    timeout_s=WAIT_S if central else 2.0,
                )
            )  # fmt: skip
            await within(answering, "the attacker's answers")
            await within(until(lambda: len(question.refused) >= 2), "both refused")
            if central:
                async with running(link.central_source().run(link.central_intake)):
                    await within(asking, "central's answer")
            else:
                await within(asking, "the wait's end")
            return question

    async def central_once() -> MarkQuestion:
        """Central's source run once, answering a start: its session on the broker is made.

        Asked again until answered: a hello sent before the source first subscribed is lost.
        """

        async def answered() -> MarkQuestion:
            while True:
                question = MarkQuestion(SITE, link.site_key, link.central_key.public_key)
                hello = question.hello()
                await central_mark(
                    settings, settings.site, SITE, hello, question.accept, timeout_s=1.0
                )
                if question.answer is not None:
                    return question

        async with running(link.central_source().run(link.central_intake)):
            return await within(answered(), "central's first answer")

    alone = asyncio.run(attacked(central=False))
    assert alone.answer is None  # neither taken: the start goes on on the other marks
    assert any("of another hello" in why for why in alone.refused)
    assert any("not signed by central's key" in why for why in alone.refused)
    first = asyncio.run(central_once())
    assert first.answer is not None
    assert first.answer.head == genuine
    with_central = asyncio.run(attacked(central=True))
    assert len(with_central.refused) == 2  # the replay and the forgery came first
    assert with_central.answer is not None
    assert with_central.answer.nonce == with_central.nonce
    assert with_central.answer.head == genuine  # central's own, not the replayed higher one
    link.close()


def test_centrals_mark_under_another_key_is_passed_over_and_an_invalid_one_refused(
    tmp_path: Path,
) -> None:
    link = Link(tmp_path, 1)
    rows(link.site, 1)
    own = sign_head(link.site_key, SITE, "", link.site.head, AT)
    assert central_marks(own, link.site_key) == [own]
    rotated = sign_head(ControllerKey.generate(), SITE, "", (99, "cd" * 32), AT)
    assert central_marks(rotated, link.site_key) == []  # another key id: a warning, no refusal
    altered = msgspec.structs.replace(own, seq=own.seq + 10)
    with pytest.raises(HighWaterFileError, match="refusing to start"):
        central_marks(altered, link.site_key)
    link.close()


def test_central_keeps_the_highest_valid_head_of_each_property_in_its_file(
    tmp_path: Path,
) -> None:
    link = Link(tmp_path, 1)
    marks = tmp_path / "central.site-heads"
    links = JournalSiteLinks(link.central, link.central_key, 0.2, marks)
    high = sign_head(link.site_key, SITE, "", (40, "aa" * 32), AT)
    low = sign_head(link.site_key, SITE, "", (30, "bb" * 32), AT)
    forged = sign_head(ControllerKey.generate(), SITE, "", (90, "cc" * 32), AT)
    assert links.keep_head(SITE, high)
    assert not links.keep_head(SITE, low)  # lower: the higher stays
    assert not links.keep_head(SITE, forged)  # not the property's key
    assert not links.keep_head("stranger", high)  # no such property linked
    restarted = JournalSiteLinks(link.central, link.central_key, 0.2, marks)
    answer = restarted.mark_answer(SITE, "f" * 32)
    assert (answer.head, answer.nonce) == (high, "f" * 32)
    assert answer.signature
    link.close()


def test_the_services_start_holds_the_journal_to_centrals_mark_and_refuses_an_invalid_one(
    tmp_path: Path,
) -> None:
    key = ControllerKey.generate()
    path = tmp_path / "journal.db"
    text = (
        f'[controller]\nsite = "s"\nid = "c1"\njournal = "{path}"\n\n'
        '[[pools]]\nid = "pool-a"\npaytable = "progressive-1"\n\n'
        '[[tables]]\nid = "T1"\ntransport = "simulator"\nprogressive = "progressive-1"\n'
        'pool = "pool-a"\n\n[web]\nport = 1\n'
    )
    config = parse_config(text, "test.toml", tmp_path)

    def start(central: SignedHead | None) -> int:
        runtime = build_runtime(config, key=key, central=central)
        head = runtime.journal.head[0]
        runtime.journal.close()
        return head

    start(None)
    head = start(None)  # no answer from central: no refusal
    ahead = sign_head(key, "c1", "", (head + 10, "ab" * 32), AT)
    with pytest.raises(StoredStateError, match=f"the controller signed row {head + 10}"):
        start(ahead)
    with pytest.raises(StartupError, match="central's mark of row"):
        start(msgspec.structs.replace(ahead, seq=head + 20))
