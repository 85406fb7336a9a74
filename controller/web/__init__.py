"""The web side: the floor's meter display, its event stream, health and metrics endpoints."""
