"""The ledger: the state of pools, tables, rounds and operators, and the pure ``apply``.

:func:`controller.ledger.apply.apply` takes the state and one event and returns the next state
and the effects (payouts, meter moves), or refuses the event. Authority is checked here, where
money moves (docs/security.md). Nothing here does I/O: the journal persists what it decides.
"""
