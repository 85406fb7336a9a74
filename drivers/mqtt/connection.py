"""What every MQTT connection of the drivers shares: the client, TLS, password, cancellation.

The source (:mod:`drivers.mqtt.source`), the sink (:mod:`drivers.mqtt.sink`) and the simulated
tables' links (:mod:`drivers.simulator_links.mqtt`) each open their own connections with
:func:`make_client`: a fixed client id, a persistent session (MQTT 3.1.1
``clean_session=False``) and a retained QoS 1 last will ``offline``; start-up's short reads
(:mod:`drivers.mqtt.published_head`, :mod:`drivers.mqtt.central_mark`) open theirs with
:func:`one_shot_client`: a clean session and no will. :class:`AckingClient`
lets the source acknowledge a message only once it is journaled (paho's manual ``PUBACK``).
:func:`guarded` and :func:`raise_if_cancelled` keep a cancellation that Python 3.11's
``asyncio.wait_for`` can drop (CPython gh-86296).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import aiomqtt
from paho.mqtt.reasoncodes import ReasonCode

from drivers.mqtt.payloads import OFFLINE

if TYPE_CHECKING:
    from collections.abc import Awaitable

    import paho.mqtt.client as paho
    from paho.mqtt.properties import Properties

    from drivers.mqtt.settings import BrokerSettings, TlsSettings

QOS: Final = 1
STATUS_TIMEOUT_S: Final = 2.0
"""How long publishing ``offline`` on the way out may take before the driver leaves anyway."""
TIMEOUT_S: Final = 10.0
"""How long to wait for the broker to answer (CONNACK, SUBACK, PUBACK) before giving up."""

_T = TypeVar("_T")


class AckingClient(aiomqtt.Client):
    """An aiomqtt client whose QoS 1 messages the caller acknowledges (see the module docstring).

    The only place the drivers touch aiomqtt's private API (``_client``, ``_queue``,
    ``_connected``, ``_on_disconnect``); tests/drivers/mqtt/test_mqtt_acking_client.py guards
    it, and pyproject.toml bounds aiomqtt above.
    """

    def _on_disconnect(
        self,
        client: paho.Client,
        userdata: Any,  # noqa: ANN401 - paho's callback
        flags: paho.DisconnectFlags,
        reason_code: ReasonCode,
        properties: Properties | None = None,
    ) -> None:
        """A connection closed before the broker's ``CONNACK`` fails the connect at once.

        aiomqtt 2.5 drops a disconnect before ``CONNACK``, and the connect waits out its whole
        timeout (10 s). That is what every table, sign and display meets in a failover
        behind HAProxy: while no node answers ``/leader`` the door accepts the connection and
        closes it at once, and the clients would come back only 10 s later
        (docs/ha.md, "A warm standby").
        """
        if not self._connected.done():
            self._connected.set_exception(
                aiomqtt.MqttError(f"the broker closed the connection unanswered ({reason_code})")
            )
            return
        super()._on_disconnect(client, userdata, flags, reason_code, properties)

    def enable_manual_ack(self) -> None:
        """Send no ``PUBACK`` until :meth:`ack`; call before connecting."""
        self._client.manual_ack_set(on=True)

    def ack(self, message: aiomqtt.Message) -> None:
        """Acknowledge one delivered message (a no-op at QoS 0)."""
        # A failure here means the connection is gone: the broker redelivers the message on
        # the next connection and the journal, having seen its id, does not apply it twice.
        self._client.ack(message.mid, message.qos)

    def received(self) -> list[aiomqtt.Message]:
        """Take the messages already received and waiting to be read, oldest first, at once.

        ``client.messages`` waits for one message at a time (a task and a wait each); a
        burst that has already arrived is taken here in one go, in the same order.
        """
        waiting: list[aiomqtt.Message] = []
        with contextlib.suppress(asyncio.QueueEmpty):
            while True:
                waiting.append(self._queue.get_nowait())
        return waiting


def tls_context(tls: TlsSettings | None) -> ssl.SSLContext | None:
    """The TLS context for the broker connection, or None for plain TCP."""
    if tls is None:
        return None
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=tls.ca_file)
    if tls.cert_file is not None:
        context.load_cert_chain(tls.cert_file, tls.key_file)
    if tls.insecure_skip_hostname_check:
        # Lab brokers with an IP-address certificate: the chain is still verified.
        context.check_hostname = False
    return context


def read_password(settings: BrokerSettings) -> str | None:
    """The broker password from its file (read at each connection, so it can be rotated)."""
    if settings.password_file is None:
        return None
    return Path(settings.password_file).read_text(encoding="utf-8").rstrip("\r\n")


def make_client(
    settings: BrokerSettings,
    *,
    identifier: str,
    will_topic: str,
    manual_ack: bool,
    timeout_s: float = TIMEOUT_S,
) -> AckingClient:
    """A client for one connection: fixed id, persistent session, QoS 1 last will ``offline``.

    Raises OSError (or ssl.SSLError) if the password file or the TLS files cannot be read.
    With ``[broker] hosts``, the first broker of the list: a caller that fails over between
    them passes the settings of each in turn (:meth:`BrokerSettings.at`).
    """
    host, port = settings.addresses()[0]
    client = AckingClient(
        host,
        port,
        identifier=identifier,
        protocol=aiomqtt.ProtocolVersion.V311,
        clean_session=False,
        keepalive=settings.keepalive_s,
        username=settings.username,
        password=read_password(settings),
        tls_context=tls_context(settings.tls),
        will=aiomqtt.Will(will_topic, OFFLINE, qos=QOS, retain=True),
        timeout=timeout_s,
    )
    if manual_ack:
        client.enable_manual_ack()
    return client


def one_shot_client(
    settings: BrokerSettings, host: str, port: int, *, purpose: str, timeout_s: float
) -> aiomqtt.Client:
    """A client for one short exchange at start-up: an id of its own, a clean session, no will.

    The id is the settings' client id, ``purpose`` and a random suffix: a second connection under
    the long-lived one's id would make the broker close that one. Raises OSError (or
    ssl.SSLError) if the password file or the TLS files cannot be read.
    """
    return aiomqtt.Client(
        host,
        port,
        identifier=f"{settings.client_id}-{purpose}-{uuid.uuid4().hex[:8]}",
        protocol=aiomqtt.ProtocolVersion.V311,
        clean_session=True,
        username=settings.username,
        password=read_password(settings),
        tls_context=tls_context(settings.tls),
        timeout=timeout_s,
    )


def check_granted(granted: tuple[int, ...] | list[ReasonCode], filters: list[str]) -> None:
    """Raise MqttError if the broker refused a subscription (an ACL, most often)."""
    codes: list[int | ReasonCode] = list(granted)
    for topic_filter, code in zip(filters, codes, strict=False):
        refused = code.is_failure if isinstance(code, ReasonCode) else int(code) >= 0x80
        if refused:
            raise aiomqtt.MqttError(f"the broker refused the subscription to {topic_filter}")


def cancellations() -> int:
    """How many cancellations of the current task are pending (see :func:`guarded`)."""
    task = asyncio.current_task()
    return 0 if task is None else task.cancelling()


def raise_if_cancelled(baseline: int) -> None:
    """Raise CancelledError if the current task was cancelled since ``baseline``, unnoticed."""
    if cancellations() > baseline:
        raise asyncio.CancelledError


async def guarded(awaitable: Awaitable[_T]) -> _T:
    """Await an aiomqtt call (publish, subscribe) without losing a cancellation.

    aiomqtt waits for the broker's answer with :func:`asyncio.wait_for`, which in Python 3.11
    returns the result and drops the cancellation when both arrive at once (CPython gh-86296,
    fixed in 3.12): the driver would go on serving after it was told to stop. The task still
    counts the cancellation (:meth:`asyncio.Task.cancelling`), so it is raised again here.
    """
    baseline = cancellations()
    result = await awaitable
    raise_if_cancelled(baseline)
    return result


async def say_status(client: aiomqtt.Client, topic: str, payload: bytes) -> None:
    """Publish a retained status on the way out, without waiting long for a dead broker."""
    with contextlib.suppress(aiomqtt.MqttError, TimeoutError):
        async with asyncio.timeout(STATUS_TIMEOUT_S):
            await guarded(client.publish(topic, payload, qos=QOS, retain=True))


def broker_failure(error: Exception) -> str | None:
    """What a failure of a broker connection was; None if it was not one (it is then raised)."""
    if isinstance(error, aiomqtt.MqttError):
        return "connection failed"
    if isinstance(error, OSError):  # the password or TLS files (ssl.SSLError is an OSError)
        return "cannot set up the connection"
    return None
