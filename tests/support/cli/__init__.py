"""Test rigs for the command line run in-process or on a terminal, and its reports."""
