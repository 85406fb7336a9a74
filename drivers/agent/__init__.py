"""The table agent's edges (``jackpotd agent``, docs/ha.md "Table agents").

``line`` serves one serial line of the table's devices, ``uplink`` the MQTT connection to the
controller, ``wire`` turns a stored device message into the table event the controller reads,
``signal`` shows the table's open or closed state, and ``service`` runs them together. The
decisions are in :mod:`controller.agent`; the outbox is reached through its port
(:class:`controller.agent.store.AgentOutbox`).
"""
