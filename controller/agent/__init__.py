"""A table agent's decisions, pure: the outbox's sequence and acknowledgements, open or closed.

The agent (``jackpotd agent``, docs/ha.md "Table agents") runs on the table's hardware, owns its
serial devices, keeps their events in a durable outbox and sends each with (table, boot, seq)
until the controller acknowledges it cumulatively. What it decides lives here, without I/O, so
that it can be read and tested alone; the serial and MQTT sides are in ``drivers/agent/``, and
the outbox's SQLite store in ``controller/journal/sqlite/agent_outbox.py``.
"""
