"""What a verified run printed, in a form that another run of the same line reproduces.

A program's stdout is the same from run to run except for a few things that belong to
the run, not to the program: ports, process ids, rendezvous ids, host names, temporary
paths and wall times. :func:`normalize` replaces those by placeholders (``<port>``,
``<pid>``, ``<id>``, ``<host>``, ``<tmp>``, ``<time>``). A harness run's per-rank logs
give the output per rank (:func:`per_rank`); a bare run's terminal interleaves the ranks
in no fixed order, so it is compared as a multiset of lines (:func:`same_lines`).

torchrun starts its workers with ``python -u`` (unbuffered), so ``print`` writes a
line's text and its newline in two writes, and two ranks printing at the same moment
can share one terminal line (``rank 1: …rank 0: …`` followed by an empty line). That is
what a reader sees too; :func:`untangle` splits such a line back into the lines the
verified run printed, and leaves anything it cannot split as it is.
"""
from __future__ import annotations

import re
import socket
from collections import Counter
from collections.abc import Iterable

from torchjob import JobResult

__all__ = ["normalize", "per_rank", "printed_lines", "same_lines", "untangle", "worker_lines"]

_HOSTS = sorted({h for h in (socket.gethostname(), socket.getfqdn()) if h and h != "localhost"}, key=len, reverse=True)
_RULES: list[tuple[re.Pattern, str]] = [
    (re.compile(r"/tmp/\S+"), "<tmp>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<id>"),
    (re.compile(r"\b(MASTER_PORT|port)([=: ])\d{2,5}\b"), r"\1\2<port>"),
    (re.compile(r"\b((?:\d{1,3}\.){3}\d{1,3}|localhost|<host>):\d{2,5}\b"), r"\1:<port>"),
    (re.compile(r"\b(pid|PID)([=: ]+)\d+\b"), r"\1\2<pid>"),
    (re.compile(r"\b\d+(?:\.\d+)? ?(?:ms|s)\b(?! ?[a-z])"), "<time>"),
]


def normalize(line: str) -> str:
    """One output line with its run-specific parts replaced by placeholders."""
    for host in _HOSTS:
        line = line.replace(host, "<host>")
    for pattern, repl in _RULES:
        line = pattern.sub(repl, line)
    return line.rstrip()


def _lines(text: str) -> list[str]:
    return [normalize(line) for line in text.splitlines() if line.strip()]


def per_rank(nodes: JobResult | Iterable[JobResult]) -> dict[str, list[str]]:
    """The normalized stdout of every worker of a harness run, by global rank.

    Args:
        nodes: the :class:`~torchjob.JobResult` of each node (one for a one-node job).

    Returns:
        ``{"rank 0": [lines], "rank 1": [...]}`` in rank order; when torchrun
        restarted workers, one entry per attempt (``"rank 0 · attempt 1"``).
    """
    nodes = [nodes] if isinstance(nodes, JobResult) else list(nodes)
    out: dict[tuple[int, int], list[str]] = {}
    attempts = {log.attempt for node in nodes for log in node.ranks}
    for node in nodes:
        local_to_global = {rec["local_rank"]: rank for rank, rec in node.records.items()}
        for log in node.ranks:
            rank = log.rank if log.rank is not None else local_to_global.get(log.local_rank, log.local_rank)
            out[(log.attempt, rank)] = _lines(log.stdout)
    label = (lambda a, r: f"rank {r} · attempt {a}") if len(attempts) > 1 else (lambda a, r: f"rank {r}")
    return {label(a, r): out[(a, r)] for a, r in sorted(out)}


def printed_lines(nodes: JobResult | Iterable[JobResult]) -> list[str]:
    """Every normalized stdout line of every worker log of a harness run, whatever rank,
    attempt or job printed it (a line that runs two jobs leaves both jobs' logs).

    Args:
        nodes: the :class:`~torchjob.JobResult` of each node (one for a one-node job).
    """
    nodes = [nodes] if isinstance(nodes, JobResult) else list(nodes)
    return [line for node in nodes for log in node.ranks for line in _lines(log.stdout)]


def _split(line: str, known: set[str], longest: int) -> list[str] | None:
    """``line`` as a concatenation of known lines (fewest pieces), or None."""
    best: list[list[str] | None] = [None] * (len(line) + 1)
    best[0] = []
    for end in range(1, len(line) + 1):
        for start in range(max(0, end - longest), end):
            piece = line[start:end]
            if best[start] is not None and piece in known:
                candidate = best[start] + [piece]
                if best[end] is None or len(candidate) < len(best[end]):
                    best[end] = candidate
    return best[len(line)]


def untangle(lines: Iterable[str], known: Iterable[str]) -> list[str]:
    """Split lines that several ranks wrote into at once back into their own lines.

    Args:
        lines: normalized lines of a bare run's terminal.
        known: the normalized lines the verified run's ranks printed.

    Returns:
        The lines, with each line that is not itself a known line but is a
        concatenation of known lines replaced by those lines; other lines unchanged.
    """
    known = {k for k in known if k}
    longest = max((len(k) for k in known), default=0)
    out: list[str] = []
    for line in lines:
        parts = None if line in known or not known else _split(line, known, longest)
        out.extend(parts if parts else [line])
    return out


def worker_lines(bare_nodes: Iterable[JobResult], known: Iterable[str] = ()) -> list[str]:
    """Every normalized stdout line of a bare run (all nodes, workers interleaved),
    untangled against the verified run's lines ``known`` (see :func:`untangle`)."""
    return untangle((line for node in bare_nodes for line in _lines(node.stdout_text)), known)


def same_lines(bare_nodes: Iterable[JobResult], reference: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    """Compare a bare run's stdout with a verified run's per-rank output, as multisets.

    Returns:
        ``(missing, extra)``: normalized lines the bare run did not print (as often as
        the reference did), and lines it printed that the reference did not. Both empty
        means the bare run reproduced the output.
    """
    want = Counter(line for lines in reference.values() for line in lines)
    got = Counter(worker_lines(bare_nodes, want))
    return sorted((want - got).elements()), sorted((got - want).elements())
