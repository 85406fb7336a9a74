"""Test rigs for the ledger: random histories, a pool's books, signed sites."""
