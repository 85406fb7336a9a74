r"""Device links that make simulated tables speak the real protocols: MQTT and serial.

:class:`drivers.simulator.SimulatedTable` hands each device event to a
:class:`~drivers.simulator.DeviceLink`. :class:`~drivers.simulator.InProcessLink` gives it to
the controller directly (the demo); the links here put it on the wire the way a real table's
devices do, so that the integration tests and the benchmarks exercise the daemon's real
drivers, framing and acknowledgements end to end:

* :class:`MqttTableLink`: one MQTT client per table (docs/mqtt.md, "Client ids and
  sessions"): fixed client id ``table-<tid>``, persistent session, last will ``offline``
  (retained, QoS 1) on ``table/<tid>/status``, ``online`` published there (retained) at every
  connection. Each event
  is a JSON payload on ``table/<tid>/event/<type>`` at QoS 1, and :meth:`MqttTableLink.send`
  returns once the broker acknowledged it (``PUBACK``). If the broker goes away the link
  reconnects with capped backoff and publishes again, first and in order, whatever was not
  acknowledged (at least once: the controller applies an event id once). It also reads the
  controller's ``table/<tid>/cmd/state`` (open or CLOSED), as a table's sign would.
* :class:`SerialTableLink`: the devices of one table on a serial line (docs/architecture.md, the
  reference protocol "table peripheral serial v1"): ``BET``/``LOCK``/``CARD``/``DONE``/``HB`` frames
  (:func:`drivers.serial.framing.encode_frame`), each written again until the host answers
  ``ACK`` (or ``NAK``), so :meth:`SerialTableLink.send` returns once the event is *journaled*
  (serial acknowledges end to end). :class:`PtyPair` gives it a pseudo-terminal: the daemon
  opens the slave path through pyserial as it would ``/dev/ttyUSB0``.

The encoders (:func:`mqtt_event`, :func:`serial_payload` and the heartbeats) are the inverse
of the controller's decoders, :func:`drivers.mqtt.payloads.decode_table_event` and
:func:`drivers.serial.protocol.decode_payload`; the tests check the round trip.

Heartbeats are best effort on both links: one that cannot be delivered now is dropped, not
queued, since a late heartbeat says nothing. Their sequence numbers are taken from
:data:`HEARTBEAT_SEQ_BASE` upward, apart from the table's event numbers (which start at 1), so
that a device never uses one ``seq`` for two messages (the serial host's ``ACK,<dev>,<seq>``
must name one frame).
"""

from drivers.simulator_links.common import HEARTBEAT_SEQ_BASE, LinkClosedError, NakError
from drivers.simulator_links.mqtt import MqttTableLink, mqtt_event, mqtt_heartbeat
from drivers.simulator_links.serial import (
    PtyPair,
    SerialTableLink,
    serial_heartbeat,
    serial_payload,
)

__all__ = [
    "HEARTBEAT_SEQ_BASE",
    "LinkClosedError",
    "MqttTableLink",
    "NakError",
    "PtyPair",
    "SerialTableLink",
    "mqtt_event",
    "mqtt_heartbeat",
    "serial_heartbeat",
    "serial_payload",
]
