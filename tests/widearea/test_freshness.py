"""The property takes an acknowledgement only if it is central's fresh one of this connection.

controller/widearea/freshness.py, controller/widearea/messages.py; docs/wide-area.md, "A
replayed acknowledgement". Michigan R 432.1841: play is suspended after a set time without
communication, so an acknowledgement captured and published again must not count as hearing
central.
"""

from __future__ import annotations

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from controller.security.controller_key import ControllerKey, signature_verifies
from controller.widearea.freshness import (
    OTHER_CONNECTION,
    REPLAYED,
    UNBOUND,
    AckFreshness,
)
from controller.widearea.messages import (
    ACK_FRESH,
    ACK_UNBOUND,
    GENESIS,
    CentralAck,
    SiteHello,
    canonical,
    decode_ack,
    decode_up,
    signed_bytes,
)

SITE = "lansing"
NONCE = "a" * 32
EARLIER = "b" * 32


def ack(counter: int, nonce: str = NONCE, version: int = ACK_FRESH) -> CentralAck:
    return CentralAck(SITE, 0, GENESIS, 12, 1, 0, nonce=nonce, counter=counter, version=version)


def reason(freshness: AckFreshness, central: CentralAck) -> str | None:
    refused = freshness.judge(central)
    return None if refused is None else refused.reason


def test_a_fresh_ack_of_this_connection_is_taken_and_raises_the_floor() -> None:
    connection = AckFreshness(NONCE)
    assert reason(connection, ack(5)) is None
    assert connection.after(ack(5)) == AckFreshness(NONCE, 5)
    assert connection.after(ack(5)).bound
    assert not connection.bound


def test_the_same_ack_again_is_refused_as_replayed() -> None:
    taken = AckFreshness(NONCE).after(ack(5))
    assert reason(taken, ack(5)) == REPLAYED


def test_an_older_ack_of_this_connection_is_refused_as_replayed() -> None:
    taken = AckFreshness(NONCE).after(ack(5))
    assert reason(taken, ack(4)) == REPLAYED
    assert reason(taken, ack(6)) is None


def test_an_ack_of_an_earlier_connection_is_refused_whatever_its_counter() -> None:
    connection = AckFreshness(NONCE)
    assert reason(connection, ack(10**15, nonce=EARLIER)) == OTHER_CONNECTION


def test_an_ack_naming_no_connection_is_refused_as_unbound() -> None:
    assert reason(AckFreshness(NONCE), ack(5, nonce="")) == UNBOUND
    assert reason(AckFreshness(NONCE), ack(5, version=ACK_UNBOUND)) == UNBOUND
    assert reason(AckFreshness(""), ack(5, nonce="")) == UNBOUND  # before any hello


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 50)), max_size=60))
def test_whatever_arrives_the_acks_taken_name_this_connection_with_counters_that_only_grow(
    arrivals: list[tuple[bool, int]],
) -> None:
    connection = AckFreshness(NONCE)
    taken: list[int] = []
    for ours, counter in arrivals:
        central = ack(counter, nonce=NONCE if ours else EARLIER)
        if connection.judge(central) is None:
            connection = connection.after(central)
            taken.append(counter)
    assert taken == sorted(set(taken))
    assert all(counter > 0 for counter in taken)


# --- the signed formats -----------------------------------------------------------------------


def test_an_ack_of_the_first_format_is_signed_over_the_fields_it_always_had() -> None:
    old = (
        b'{"epoch":1,"head":"%s","journal_seq":12,"reconciled_through":0,'
        b'"signature":"","site":"lansing","through":0}'
    )  # as the first format's central signed it: canonical, every field but the signature's
    legacy = decode_ack(old % GENESIS.encode())
    assert legacy.version == ACK_UNBOUND
    assert signed_bytes(legacy) == old % GENESIS.encode()


def test_centrals_signature_covers_the_nonce_and_the_counter() -> None:
    key = ControllerKey.generate()
    central = ack(7)
    signed = msgspec.structs.replace(central, signature=key.sign(signed_bytes(central)))
    assert signature_verifies(key.public_key, signed.signature, signed_bytes(signed))
    for forged in (
        msgspec.structs.replace(signed, nonce=EARLIER),
        msgspec.structs.replace(signed, counter=8),
        msgspec.structs.replace(signed, version=ACK_UNBOUND),
    ):
        assert not signature_verifies(key.public_key, forged.signature, signed_bytes(forged))
    assert decode_ack(canonical(signed)) == signed


def test_a_hello_travels_on_the_up_topic_and_is_signed_by_the_property() -> None:
    key = ControllerKey.generate()
    hello = SiteHello(SITE, NONCE)
    hello = msgspec.structs.replace(hello, signature=key.sign(signed_bytes(hello)))
    assert decode_up(canonical(hello)) == hello
    assert signature_verifies(key.public_key, hello.signature, signed_bytes(hello))
    other = msgspec.structs.replace(hello, nonce=EARLIER)
    assert not signature_verifies(key.public_key, other.signature, signed_bytes(other))
