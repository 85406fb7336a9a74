"""Keys, signatures and the manifest: who may do what, and what software is running.

Operator and controller keys (sealed key files), Ed25519 signatures over events, and the
software manifest a manager approves (docs/security.md, docs/operations.md).
"""
