"""Test rigs for the drivers: brokers, MQTT and serial rigs, signs, table agents."""
