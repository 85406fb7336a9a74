"""The running controller: the sequencer that owns the meters, and what watches it.

The :mod:`.sequencer` is the only writer of the journal and the only owner of the ledger state
while the daemon runs; liveness, checkpoints, metrics and the broadcast of updates to the sinks
sit around it (docs/architecture.md).
"""
