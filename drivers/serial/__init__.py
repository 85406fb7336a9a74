"""The serial link to table devices (reference protocol "table peripheral serial v1").

Three layers, kept apart as in pymodbus: :mod:`.framing` (bytes <-> frames, CRC, resync),
:mod:`.protocol` (payload text <-> typed events, ACK/NAK) and :mod:`.link` (the port, the
reconnect loop and the intake). The driver is registered here as ``serial``.
"""
