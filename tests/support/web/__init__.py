"""Test rigs for the display and the console in headless Chromium, passkeys, metrics scrapes."""
