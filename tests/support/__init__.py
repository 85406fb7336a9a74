"""Test rigs shared by the test modules: brokers, floors, journals, fakes and the oracle.

Imported as ``from support.floor import approved_site`` (``tests/`` is on the path: ``pythonpath``
in pyproject.toml); the fixtures of :mod:`support.controller_keys`, :mod:`support.journal_rig` and
:mod:`support.mosquitto` are registered for every test by ``tests/conftest.py``. No test module
imports another.
"""
