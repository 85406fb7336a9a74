"""Jackpot signs: what a sign shows (:mod:`.behaviour`) and the Alpha serial sign driver.

Three layers, kept apart as in the serial link: :mod:`.alpha` (Alpha Sign Communications
Protocol frames, bytes only), :mod:`.behaviour` (a pure state machine: what a sign shows and
when, reusable by any sign, an MQTT display included) and :mod:`.serial_sign` (the port, the
timer, the reconnect loop). The driver is registered here as ``alpha-sign``; see
``docs/signs.md``.
"""
