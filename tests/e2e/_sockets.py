"""_sockets.py - socket helpers shared by the connection tests (imported by
test_conn_flood.sh's Python parts)."""


def closed(s):
    """True when the server has closed s (EOF or an error), without waiting.
    Leaves s non-blocking."""
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True
