"""The configuration: one TOML file validated into typed objects, and what it asks the ledger.

:mod:`.load` reads and checks the file, :mod:`.schema` types it, :mod:`.changes` turns it into
the journal events that bring the ledger in line, :mod:`.approval` wraps them in a manager's
signed approval (docs/operations.md). Driver sections are typed by the drivers themselves
(:mod:`controller.plugins`).
"""
