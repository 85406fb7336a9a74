"""MQTT drivers: table events in (``mqtt``), meters, hits and table commands out (``mqtt-display``).

The topic tree and payloads are in :mod:`drivers.mqtt.topics` and :mod:`drivers.mqtt.payloads`,
described for table and sign vendors in ``docs/mqtt.md``. The drivers are registered by name
here and imported only when a configuration picks them, so that importing this package does not
need aiomqtt.
"""
