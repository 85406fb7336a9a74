"""deploy/mosquitto as shipped, on a real broker: the rig of the broker-configuration tests.

The shipped ``mosquitto.conf`` runs as it is but for the directives that name this machine's
paths and port (deploy/mosquitto/README.md lists them); the ACL file is used exactly as shipped.
The credentials come from the shipped ``make-secrets.sh`` (openssl and mosquitto_passwd): a CA,
the broker's certificate, a client certificate per client and a password per user. The site
and the controller's ids are those of deploy/jackpotd.toml, and every topic is built by the
controller's own :class:`~drivers.mqtt.topics.Topics`.

``credentials`` (the fixture, registered by importing ``credentials_fixture``) runs
make-secrets.sh once per module; :func:`start_shipped` starts a broker on them;
:func:`connect` is a client over TLS as one user, watched (:mod:`mqtt_watch`);
:func:`controller_settings` are the controller's ``[broker]`` settings for its two users.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import shutil
import ssl
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import aiomqtt
import pytest
from paho.mqtt.reasoncodes import ReasonCode

from drivers.mqtt.settings import BrokerSettings, TlsSettings
from drivers.mqtt.topics import Topics
from support.drivers.mosquitto import Broker
from support.drivers.mqtt_watch import Watch, watching
from support.runtime.floor import within

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Collection

REPO: Final = Path(__file__).resolve().parents[3]
SHIPPED: Final = REPO / "deploy" / "mosquitto"
SAMPLE: Final = tomllib.loads((REPO / "deploy" / "jackpotd.toml").read_text(encoding="utf-8"))
SITE: Final[str] = SAMPLE["controller"]["site"]
CONTROLLER: Final[str] = SAMPLE["controller"]["id"]
"""The controller's id: its status topic is ``controller/<id>/status``."""
CLIENT_ID: Final = f"jackpotd-{CONTROLLER}"
"""The controller's MQTT client id (``jackpotd-<controller id>``, the default): its source
connects as ``<client id>-in``, its sink as ``<client id>-out``."""
IN_USER: Final = "jackpotd-in"
OUT_USER: Final = "jackpotd-out"
"""The controller's two broker users, one per connection (deploy/mosquitto/acl)."""
CERTIFICATE: Final = "jackpotd"
"""The controller's client certificate, for both of its connections."""
TOPICS: Final = Topics(SITE)
TABLES: Final = ("t1", "t2")
HOST: Final = "127.0.0.1"
WAIT_S: Final = 10.0
AT: Final = "2025-01-02T03:04:05.000Z"

SUBSTITUTED: Final = (
    "listener",
    "cafile",
    "certfile",
    "keyfile",
    "password_file",
    "acl_file",
    "persistence_location",
    "user",
)
"""The only directives a site changes (README.md), and the only ones the tests change."""


def directives(text: str) -> list[tuple[str, str]]:
    """The (key, value) lines of a mosquitto configuration, comments left out."""
    pairs = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            key, _, value = stripped.partition(" ")
            pairs.append((key, value.strip()))
    return pairs


def substitute(text: str, values: dict[str, str], *, drop: Collection[str] = ()) -> str:
    """The configuration with each directive in ``values`` set to that value (each occurs once).

    The directives in ``drop`` are left out (each must be in the file once too).
    """
    seen = dict.fromkeys([*values, *drop], 0)
    lines = []
    for line in text.splitlines():
        key = line.strip().partition(" ")[0]
        if key in seen and not line.lstrip().startswith("#"):
            seen[key] += 1
            if key in values:
                lines.append(f"{key} {values[key]}")
        else:
            lines.append(line)
    assert seen == dict.fromkeys(seen, 1), f"each directive once in mosquitto.conf: {seen}"
    return "\n".join(lines) + "\n"


# The credentials and the broker.


@dataclass(frozen=True)
class Credentials:
    """What make-secrets.sh wrote."""

    directory: Path

    def password_file(self, user: str) -> Path:
        """The file of the user's password, in clear."""
        return self.directory / "passwords" / user

    def password(self, user: str) -> str:
        """The user's password, in clear."""
        return self.password_file(user).read_text(encoding="utf-8").strip()

    def cert(self, client: str) -> tuple[Path, Path]:
        """The client's certificate and key."""
        clients = self.directory / "clients"
        return clients / f"{client}.crt", clients / f"{client}.key"

    def context(self, cert_client: str | None) -> ssl.SSLContext:
        """A client's TLS context: the CA, and the client's certificate if given."""
        context = ssl.create_default_context(cafile=self.directory / "ca.crt")
        if cert_client is not None:
            context.load_cert_chain(*self.cert(cert_client))
        return context


def tool(name: str) -> str:
    found = shutil.which(name, path=f"{os.environ.get('PATH', '')}:/usr/sbin:/usr/bin")
    if found is None:
        pytest.fail(f"{name} not found: apt-get install openssl mosquitto", pytrace=False)
    return found


def make_secrets(directory: Path, *tables: str) -> subprocess.CompletedProcess[str]:
    """Run the shipped make-secrets.sh for ``tables`` into ``directory`` (not checked)."""
    tool("openssl")
    environment = {
        **os.environ,
        "SERVER_NAMES": f"localhost {HOST}",
        "MOSQUITTO_PASSWD": tool("mosquitto_passwd"),
    }
    return subprocess.run(
        ["/bin/sh", str(SHIPPED / "make-secrets.sh"), str(directory), *tables],
        check=False,
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )


@pytest.fixture(scope="module", name="credentials")
def credentials_fixture(tmp_path_factory: pytest.TempPathFactory) -> Credentials:
    """make-secrets.sh's credentials for the sample's users and TABLES, once per module."""
    directory = tmp_path_factory.mktemp("secrets")
    made = make_secrets(directory, *TABLES)
    assert made.returncode == 0, made.stderr
    return Credentials(directory)


def start_shipped(
    directory: Path, credentials: Credentials, *, drop: Collection[str] = ()
) -> Broker:
    """A broker on the shipped configuration and ACL (less the directives in ``drop``)."""
    server = credentials.directory / "broker"
    broker = Broker(directory)
    directory.mkdir(parents=True, exist_ok=True)
    broker.config.write_text(
        substitute(
            (SHIPPED / "mosquitto.conf").read_text(encoding="utf-8"),
            {
                "listener": f"{broker.port} {HOST}",
                "cafile": str(credentials.directory / "ca.crt"),
                "certfile": str(server / "server.crt"),
                "keyfile": str(server / "server.key"),
                "password_file": str(server / "passwd"),
                "acl_file": str(SHIPPED / "acl"),
                "persistence_location": f"{directory}/",
                # As root mosquitto would switch to "mosquitto" and lose the test's directory.
                "user": pwd.getpwuid(os.getuid()).pw_name,
            },
            drop=drop,
        )
    )
    broker.start()
    return broker


# Clients.


@contextlib.asynccontextmanager
async def connect(
    broker: Broker,
    credentials: Credentials,
    user: str | None,
    identifier: str,
    *,
    password: str | None = None,
    cert_client: str | None = "",
    will: aiomqtt.Will | None = None,
    clean_session: bool = True,
) -> AsyncIterator[Watch]:
    """A client over TLS as ``user``: its password and its machine's certificate by default."""
    if user is not None and password is None:
        password = credentials.password(user)
    if cert_client == "":
        cert_client = CERTIFICATE if user in {IN_USER, OUT_USER} else user
    client = aiomqtt.Client(
        HOST,
        broker.port,
        identifier=identifier,
        username=user,
        password=password,
        tls_context=credentials.context(cert_client),
        will=will,
        clean_session=clean_session,
        timeout=WAIT_S,
    )
    async with client, watching(client, WAIT_S) as watcher:
        yield watcher


async def refused(
    broker: Broker,
    credentials: Credentials,
    user: str | None,
    *,
    password: str | None = None,
    cert_client: str | None = "",
) -> str:
    """The error a connection attempt ends with (the test fails if it connects)."""
    try:
        async with connect(
            broker, credentials, user, "refused", password=password, cert_client=cert_client
        ):
            pass
    except (aiomqtt.MqttError, ssl.SSLError, OSError) as error:
        return str(error)
    pytest.fail(f"{user!r} connected")


def start_warnings(log: str) -> list[str]:
    """What mosquitto flagged while loading its files: the log before it opened its listener.

    After the listener opens, the log has the clients (the tests' readiness probe among them).
    """
    loading = log.split("Opening ipv4 listen socket", 1)[0]
    return [
        line.split(": ", 1)[1]
        for line in loading.splitlines()
        if "warning" in line.lower() or "error" in line.lower()
    ]


async def subscribe(watch: Watch, *filters: str) -> list[bool]:
    """Subscribe at QoS 1; whether each subscription was granted."""
    granted = await watch.client.subscribe([(f, 1) for f in filters])
    return [
        not code.is_failure if isinstance(code, ReasonCode) else int(code) < 0x80
        for code in granted
    ]


async def publish(watch: Watch, topic: str, payload: bytes, *, retain: bool = False) -> None:
    """Publish at QoS 1 and wait for the broker's PUBACK (it has handled the message)."""
    await watch.client.publish(topic, payload, qos=1, retain=retain)


# The controller, with its own drivers.


def controller_settings(broker: Broker, credentials: Credentials) -> BrokerSettings:
    """The controller's [broker] settings: a user per connection, one certificate for both."""
    cert, key = credentials.cert(CERTIFICATE)
    return BrokerSettings(
        host=HOST,
        port=broker.port,
        client_id=CLIENT_ID,
        username=IN_USER,
        password_file=str(credentials.password_file(IN_USER)),
        out_username=OUT_USER,
        out_password_file=str(credentials.password_file(OUT_USER)),
        site=SITE,
        controller_id=CONTROLLER,
        keepalive_s=5,
        backoff_initial_s=0.05,
        backoff_cap_s=0.5,
        tls=TlsSettings(
            ca_file=str(credentials.directory / "ca.crt"), cert_file=str(cert), key_file=str(key)
        ),
    )


async def feed(queue: asyncio.Queue[Any]) -> AsyncIterator[Any]:
    """The updates put in ``queue``, as a sink takes them."""
    while True:
        yield await queue.get()


@contextlib.asynccontextmanager
async def running(coroutine: Any) -> AsyncIterator[None]:
    """Run a driver inside the block; cancel it (and wait, bounded) on the way out."""
    task = asyncio.create_task(coroutine)
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await within(task, "a driver to stop")
