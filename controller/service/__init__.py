"""The controller as a service: start-up checks, drivers from the registry, one task group.

:mod:`.wiring` assembles the journal, the sequencer, the sources and sinks the configuration
names (:mod:`.registry`) and the web display; :mod:`.demo` is what ``make demo`` runs.
"""
