"""The reports a regulator schedules, made from the journal's rows alone (docs/operations.md).

Pure: each function takes journal rows (their canonical columns, docs/journal.md) and returns
figures; the command line prints them (controller/cli/report_returns.py).
"""
