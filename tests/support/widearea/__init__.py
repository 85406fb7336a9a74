"""Test rigs for wide-area links: central and properties, their configuration, the WAN test."""
