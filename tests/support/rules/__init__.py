"""Test rigs for the rules engine and its oracle: hands, paytables, settlement rounds."""
