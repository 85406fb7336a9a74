"""The edges of the controller: transports, device decoders, signs and the table simulator.

Drivers arrive with the daemon issue; the package exists now so that the layout is fixed.
"""
