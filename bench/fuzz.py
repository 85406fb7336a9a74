"""Fuzzing the inputs the controller takes from outside: at least 100,000 inputs per target.

Targets: the serial framer and payload decoder (bytes off a wire), the MQTT payload decoder
(JSON from a broker), the card parser (shoe codes), and the configuration loader (TOML a person
wrote). Inputs are mutations of valid seeds (bit flips, byte insertions and deletions, splices
of two seeds, runs of random bytes) plus pure noise, from a fixed seed so a run is repeatable.

Then the structural attacks of bench/structural.py, which mutation rarely builds (deep
nesting, duplicate keys, huge numbers, NaN, long strings, invalid UTF-8, lone surrogates), each
in every field of every message: through the MQTT payload decoder, and through the serial
protocol decoder both directly and framed.

Each input must end in an accepted value or in the target's documented error, within a time
bound; anything else (another exception, a hang) is a finding and the run exits 1. Every
rejection is counted by reason. Results go to bench/results/fuzz.json. The property-based
tests in tests/ (hypothesis) cover the same targets with shrinking; this runs the volume.
"""

from __future__ import annotations

import argparse
import functools
import random
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from common import write_results
from structural import mqtt_attacks, serial_attacks

from controller.config.load import ConfigError, parse_config
from controller.rules.cards import CardError, HandError, SevenCardHand
from drivers.mqtt.json_objects import PayloadError
from drivers.mqtt.payloads import decode_table_event
from drivers.serial.framing import FrameError, FrameReader, crc16, encode_frame
from drivers.serial.protocol import ProtocolError, decode_payload

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

SLOW_S = 0.5

SERIAL_SEEDS = [
    encode_frame(payload)
    for payload in (
        "BET,sensor1,17,3,bonus,1,500",
        "BET,sensor1,18,3,progressive,0",
        "LOCK,console,4,R-99",
        "CARD,shoe,1201,R-99,0,As",
        "CARD,shoe,1202,R-99,6,Jk",
        "DONE,shoe,1203,R-99",
        "VOID,console,5,R-99,misdeal",
        "HB,console,77",
    )
]
MQTT_SEEDS = [
    (
        "bet",
        b'{"v":1,"device":"s1","seq":3,"seat":2,"spot":"bonus","present":true,"amount_cents":500}',
    ),
    ("lock", b'{"v":1,"device":"c1","seq":4,"round":"R1"}'),
    ("card", b'{"v":1,"device":"shoe","seq":5,"round":"R1","position":0,"card":"Td"}'),
    ("done", b'{"v":1,"device":"shoe","seq":6,"round":"R1"}'),
    ("void", b'{"v":1,"device":"c1","seq":7,"round":"R1","reason":"misdeal"}'),
    ("heartbeat", b'{"v":1,"device":"c1","seq":8}'),
]
CARD_SEEDS = [b"As Kd Tc 9h 5s 3c Jk", b"Th Td 2c 3c 4c 5c 6c", b"Ac Kd Qh Js Ts 9s 8s"]
"""Canonical codes: the card parser is the devices' (strict) one; see controller/rules/cards.py."""
CONFIG_SEED = (Path(__file__).parent.parent / "deploy" / "jackpotd.toml").read_bytes()


def mutate(rng: random.Random, seeds: Sequence[bytes]) -> bytes:
    """One mutated input."""
    data = bytearray(rng.choice(seeds))
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        if choice < 0.25 and data:
            index = rng.randrange(len(data))
            data[index] ^= 1 << rng.randrange(8)
        elif choice < 0.45:
            data[rng.randint(0, len(data)) : rng.randint(0, len(data))] = rng.randbytes(
                rng.randint(0, 8)
            )
        elif choice < 0.65 and data:
            start = rng.randrange(len(data))
            del data[start : start + rng.randint(1, 16)]
        elif choice < 0.8:
            other = rng.choice(seeds)
            cut = rng.randint(0, len(other))
            data += other[cut:]
        elif choice < 0.9:
            data = bytearray(rng.randbytes(rng.randint(0, 300)))
        else:
            position = rng.randint(0, len(data))
            data[position:position] = rng.choice(
                [b"$", b"*", b",", b"\r\n", b'"', b"{", b"}", b"\x00", b"\xff"]
            )
    return bytes(data)


def serial_target(data: bytes) -> str:
    reader = FrameReader()
    outcome = "empty"
    for item in [*reader.feed(data), *reader.flush()]:
        if isinstance(item, FrameError):
            outcome = f"frame:{item.reason}"
            continue
        try:
            decode_payload(item.payload, "T1")
            outcome = "accepted"
        except ProtocolError as error:
            outcome = f"payload:{error.reason}"
    return outcome


def mqtt_target(kind: str) -> Callable[[bytes], str]:
    def target(data: bytes) -> str:
        try:
            decode_table_event("T1", kind, data)
        except PayloadError as error:
            return error.reason
        return "accepted"

    return target


def card_target(data: bytes) -> str:
    try:
        SevenCardHand.parse(data.decode("utf-8", errors="replace"))
    except CardError:
        return "bad-card"
    except HandError:
        return "bad-hand"
    return "accepted"


def serial_frame(payload: str) -> bytes:
    """A frame with a good CRC around any payload, even one the framer would refuse."""
    data = payload.encode("utf-8", "surrogatepass")
    return b"$%s*%04X\r\n" % (data, crc16(data))


def structural(name: str, attacks: Sequence[tuple[str, Callable[[], str]]]) -> dict[str, object]:
    """Run each named attack once; any exception is a crash (a finding), as is a slow one."""
    outcomes: Counter[str] = Counter()
    crashes: list[str] = []
    slowest = 0.0
    started = time.perf_counter()
    for label, attack in attacks:
        begin = time.perf_counter()
        try:
            outcomes[attack()] += 1
        except Exception as error:  # noqa: BLE001 - every other exception is a finding
            outcomes["crash"] += 1
            crashes.append(f"{label}: {type(error).__name__}: {str(error)[:120]}")
        elapsed = time.perf_counter() - begin
        slowest = max(slowest, elapsed)
        if elapsed > SLOW_S:
            crashes.append(f"{label}: slow ({elapsed:.2f} s)")
    print(
        f"{name:<14} {len(attacks):>9,} attacks  slowest {slowest * 1000:6.1f} ms  "
        f"accepted {outcomes['accepted']:>7,}  crashes {outcomes['crash']}"
    )
    return {
        "inputs": len(attacks),
        "seconds": time.perf_counter() - started,
        "outcomes": dict(outcomes.most_common()),
        "findings": crashes[:20],
        "crashes": outcomes["crash"],
    }


def structural_results() -> dict[str, dict[str, object]]:
    """The structural attacks on the MQTT decoder, the serial decoder and the serial framer."""
    mqtt = [
        (f"{kind}: {label}", functools.partial(mqtt_target(kind), data))
        for kind, label, data in mqtt_attacks()
    ]
    serial = serial_attacks()
    direct = [(label, functools.partial(serial_payload_target, text)) for label, text in serial]
    framed = [
        (label, functools.partial(serial_target, serial_frame(text))) for label, text in serial
    ]
    return {
        "mqtt": structural("mqtt attacks", mqtt),
        "serial": structural("serial attacks", direct),
        "serial framed": structural("serial framed", framed),
    }


def serial_payload_target(payload: str) -> str:
    try:
        decode_payload(payload, "T1")
    except ProtocolError as error:
        return f"payload:{error.reason}"
    return "accepted"


def config_target(data: bytes) -> str:
    try:
        parse_config(data, "<fuzz>", Path.cwd())
    except ConfigError as error:
        return error.key.split("[")[0].split(".")[0] or "file"
    return "accepted"


def run(
    name: str,
    target: Callable[[bytes], str],
    seeds: Sequence[bytes],
    count: int,
    rng: random.Random,
) -> dict[str, object]:
    outcomes: Counter[str] = Counter()
    findings: list[str] = []
    slowest = 0.0
    started = time.perf_counter()
    for index in range(count):
        data = mutate(rng, seeds) if index % 10 else rng.randbytes(rng.randint(0, 200))
        begin = time.perf_counter()
        try:
            outcomes[target(data)] += 1
        except Exception as error:  # noqa: BLE001 - every other exception is a finding
            findings.append(f"{type(error).__name__}: {error} on {data[:80]!r}")
        elapsed = time.perf_counter() - begin
        slowest = max(slowest, elapsed)
        if elapsed > SLOW_S:
            findings.append(f"slow input ({elapsed:.2f} s): {data[:80]!r}")
    seconds = time.perf_counter() - started
    rate, accepted = count / seconds, outcomes["accepted"]
    print(
        f"{name:<14} {count:>9,} inputs  {rate:>9,.0f}/s  slowest {slowest * 1000:6.1f} ms  "
        f"accepted {accepted:>7,}  findings {len(findings)}"
    )
    return {
        "inputs": count,
        "seconds": seconds,
        "outcomes": dict(outcomes.most_common()),
        "findings": findings[:20],
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--inputs", type=int, default=100_000, help="inputs per target")
    parser.add_argument("--seed", type=int, default=20261129)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    results = {
        "serial": run("serial", serial_target, SERIAL_SEEDS, args.inputs, rng),
        "card": run("card parser", card_target, CARD_SEEDS, args.inputs, rng),
        "config": run("config", config_target, [CONFIG_SEED], args.inputs, rng),
    }
    per_kind = max(1, args.inputs // len(MQTT_SEEDS))
    mqtt: dict[str, object] = {}
    for kind, seed in MQTT_SEEDS:
        mqtt[kind] = run(
            f"mqtt {kind}", mqtt_target(kind), [seed for _, seed in MQTT_SEEDS], per_kind, rng
        )
    results["mqtt"] = mqtt
    attacks = structural_results()
    results["structural"] = attacks
    path = write_results("fuzz", results)
    findings = sum(
        len(r["findings"])
        for r in (
            results["serial"],
            results["card"],
            results["config"],
            *mqtt.values(),
            *attacks.values(),
        )
    )  # type: ignore[arg-type, misc]
    print(f"results in {path}; findings: {findings}")
    if findings:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
