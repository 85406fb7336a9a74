"""The wide-area link in the ledger: central's side, a property's side, and their part of the state.

docs/wide-area.md. :mod:`.sites` is the state (central's linked properties, a property's chain
to central); :mod:`.central` applies what central journals, :mod:`.property` what a property
journals. The link's decisions that do no ledger work (a message's chain, its freshness) are
:mod:`controller.widearea`; its I/O is the uplink driver's.
"""
