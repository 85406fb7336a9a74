"""Test rigs for high availability: the lab cluster, its processes, links to cut, the chaos test."""
