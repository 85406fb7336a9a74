"""What the command modules share: the error a command raises for bad input."""


class CommandError(ValueError):
    """Bad input to a command; reported as one line on stderr with exit status 1."""
