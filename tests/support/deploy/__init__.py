"""Test rigs for deploy/ and the docs' commands: shipped files, copied software, scratch roots."""
