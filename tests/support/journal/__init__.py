"""Test rigs for the journal: its rig, the backends' contract, PostgreSQL servers, old files."""
