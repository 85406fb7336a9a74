"""Test rigs shared by the test modules, one subpackage for each layer they serve.

``rules`` (the oracle, hands, settlement rounds), ``ledger`` (random histories, a pool's books,
signed sites), ``journal`` (its rig, the backends' contract, PostgreSQL servers), ``drivers``
(brokers, MQTT and serial rigs, signs, table agents), ``runtime`` (the daemon in-process and
as a process, floors, signers), ``web`` (Chromium, passkeys, scrapes), ``ha`` (the lab cluster,
the chaos test), ``widearea`` (central and properties, the WAN test), ``cli`` and ``deploy``;
what every layer's tests use (bounded waits, fake clocks, file modes, configuration files)
stays here. Imported as ``from support.runtime.floor import approved_site`` (``tests/`` is on
the path: ``pythonpath`` in pyproject.toml); the fixtures of :mod:`support.runtime.controller_keys`,
:mod:`support.journal.journal_rig` and :mod:`support.drivers.mosquitto` are registered for every
test by ``tests/conftest.py``. No test module imports another.
"""
