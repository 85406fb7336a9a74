"""Test rigs for the runtime and the service: the daemon in-process and alone, floors, signers."""
