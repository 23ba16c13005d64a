"""Verification records: which snippet programs passed their torchrun test, on what.

One committed file, ``snippets/verification.json``, maps each program (path relative
to ``snippets/``) to one record per environment class (``cpu-gloo``, ``cuda-nccl``), so
a CPU run never erases a GPU record. A record is bound to content: the SHA-256 of the
program and of every local module it imports. It holds no timestamps, so it changes
only when something real changed. The build gate (``hooks/verification_gate.py``)
reads it without needing torch; the pytest plugin (``tests/verification_plugin.py``)
writes it.
"""
from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .filecache import StatCache

__all__ = [
    "RECORDS_FILE",
    "Record",
    "content_hash",
    "environment_class",
    "local_imports",
    "load_records",
    "save_records",
    "test_for",
    "status",
    "Status",
]

RECORDS_FILE = "verification.json"  # under snippets/


@dataclass(frozen=True)
class Record:
    """One passing run of one program in one environment class.

    Attributes:
        sha256: :func:`content_hash` of the program when it passed.
        files: SHA-256 of each file that hash covers, by path relative to snippets/.
        torch: torch version (without a local build tag: ``"2.13.0"``).
        python: ``"major.minor"`` of the interpreter.
        backend: ``"gloo"`` or ``"nccl"``.
        device: ``"cpu"`` or ``"cuda"``.
        device_count: CUDA devices used (0 on CPU).
        nproc_per_node: processes per node of the job.
        nnodes: nodes of the job.
        test: the pytest node id of the test module that verified it.
        outcome: ``"passed"``.
        bare_runs: how many bare runs (the page's launch line, no harness, the
            reader's environment) passed; a record is written only when every bare run
            of the session passed, so this is also how many ran. 0 in records from
            before bare runs existed: such a record does not count as verified.
        output: what the verified run printed, per rank (``{"rank 0": [lines]}``),
            with the parts that vary between runs (ports, pids, host names, times)
            replaced by placeholders such as ``<port>``; every bare run reproduced it.
    """

    sha256: str
    files: dict[str, str]
    torch: str
    python: str
    backend: str
    device: str
    device_count: int
    nproc_per_node: int
    nnodes: int
    test: str
    outcome: str = "passed"
    bare_runs: int = 0
    output: dict[str, list[str]] = field(default_factory=dict)

    @property
    def environment(self) -> str:
        """The environment class this record belongs to: ``"cpu-gloo"`` or ``"cuda-nccl"``."""
        return environment_class(self.device, self.backend)


def environment_class(device: str, backend: str) -> str:
    """The key records are filed under: ``"cpu-gloo"``, ``"cuda-nccl"``."""
    return f"{device}-{backend}"


def local_imports(program: Path) -> list[Path]:
    """The program and every module of its own folder it imports, transitively.

    Args:
        program: a ``.py`` file.

    Returns:
        Sorted paths: the program first-level imports resolved against its folder
        (``import helpers`` -> ``helpers.py``). Standard-library and installed
        packages are not part of a program's content and are left out.
    """
    folder = program.parent
    seen: set[Path] = set()
    todo = [program]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level in (0, 1):
                names = [node.module]
            for name in names:
                candidate = folder / (name.split(".")[0] + ".py")
                if candidate.is_file():
                    todo.append(candidate)
    return sorted(seen)


# SHA-256 of a file; a program's local imports, kept until it or any module it imports
# changes (a module can start importing another one).
_digest = StatCache(lambda path: hashlib.sha256(path.read_bytes()).hexdigest())
_cached_imports = StatCache(local_imports, sources=lambda program, imports: imports)


def content_hash(program: Path, snippets_dir: Path) -> tuple[str, dict[str, str]]:
    """SHA-256 over a program and its local imports.

    Args:
        program: the program file.
        snippets_dir: the ``snippets/`` folder paths are made relative to.

    Returns:
        ``(combined, per_file)``: the hex digest over the sorted ``path sha256`` lines,
        and each file's own hex digest.
    """
    files = {p.relative_to(snippets_dir).as_posix(): _digest(p) for p in _cached_imports(program)}
    manifest = "".join(f"{path} {digest}\n" for path, digest in sorted(files.items()))
    return hashlib.sha256(manifest.encode()).hexdigest(), files


def load_records(snippets_dir: Path) -> dict[str, dict[str, Record]]:
    """All records: ``{program: {environment: Record}}`` (empty when there is no file).

    Cached by the file's modification time and size: the build gate asks on every page of
    every language. Callers that change the result must copy it first.

    Raises:
        ValueError: the file is not valid JSON or a record lacks a field; the message
            names the file.
    """
    path = snippets_dir / RECORDS_FILE
    return _records(path) if path.is_file() else {}


def _read_records(path: Path) -> dict[str, dict[str, Record]]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return {prog: {env: Record(**rec) for env, rec in envs.items()} for prog, envs in raw.items()}
    except (json.JSONDecodeError, TypeError) as exc:
        raise ValueError(f"{path}: unreadable verification records ({exc}); restore it with git and re-run pytest") from None


_records = StatCache(_read_records)


def save_records(snippets_dir: Path, records: dict[str, dict[str, Record]]) -> bool:
    """Write the records, sorted and indented for readable diffs, if they changed.

    Returns:
        True when the file was written.
    """
    path = snippets_dir / RECORDS_FILE
    data = {prog: {env: asdict(rec) for env, rec in sorted(envs.items())} for prog, envs in sorted(records.items())}
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def test_for(program: str) -> str:
    """The test module of a program by the one-slug rule, one module per program:
    ``ddp_basics/train.py`` -> ``tests/snippets/test_ddp_basics/test_train.py``."""
    slug, _, name = program.partition("/")
    return f"tests/snippets/test_{slug}/test_{Path(name).stem}.py"


test_for.__test__ = False  # a helper, not a pytest test


@dataclass(frozen=True)
class Status:
    """What the site may say about one program now.

    Attributes:
        current: records whose hash matches the program as it is now and whose bare
            runs passed, by environment.
        stale: True when records exist but none of them is current.
        digest: the program's :func:`content_hash` now.
    """

    current: dict[str, Record]
    stale: bool
    digest: str = ""

    @property
    def verified(self) -> bool:
        """Passed, as it is now, in at least one environment."""
        return bool(self.current)


def status(program: str, snippets_dir: Path, records: dict[str, dict[str, Record]]) -> Status:
    """The verification status of one program (path relative to snippets/)."""
    digest, _ = content_hash(snippets_dir / program, snippets_dir)
    envs = records.get(program, {})
    current = {env: rec for env, rec in envs.items()
               if rec.sha256 == digest and rec.outcome == "passed" and rec.bare_runs > 0}
    return Status(current=current, stale=bool(envs) and not current, digest=digest)
