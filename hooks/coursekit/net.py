"""Local network helpers for the tools that start servers and jobs (bench, tests)."""
from __future__ import annotations

import socket

__all__ = ["free_port"]


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free on ``host`` a moment ago, picked by the operating system
    (another process may still take it before the caller binds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]
