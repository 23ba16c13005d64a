"""Verification records: which snippet programs passed their torchrun test, on what.

Records live in ``snippets/verification/``, one committed file per platform (a kind of
machine with one torch version: ``cpu-x86_64-torch2.13.0.json``,
``cuda-1xnvidia-h100-80gb-hbm3-x86_64-torch2.11.0.json``; :func:`platform_name`). A test
session writes only its own platform's file, so records from different machines merge
without conflicts: a reader who runs the checks on their GPUs adds one file by pull
request. Each file maps each program (path relative to ``snippets/``) to one record per
environment class (``cpu-gloo``, ``cuda-nccl``, ``cuda-gloo``). A record is bound to content: the SHA-256 of the
program and of every local module it imports. It holds no timestamps, so it changes
only when something real changed. The build gate (``hooks/verification_gate.py``)
reads it without needing torch; the pytest plugin (``tests/verification_plugin.py``)
writes it. A program's content also holds the files its launch line names (a Slurm
batch script it submits, :func:`coursekit.runspec.launch_files`), so editing the script
a page shows makes the program's records stale just as editing the program does.
"""
from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from po_i18n.filecache import StatCache
from .runspec import launch_files

__all__ = [
    "RECORDS_DIR",
    "platform_name",
    "Record",
    "content_hash",
    "environment_class",
    "local_imports",
    "cached_program_files",
    "program_files",
    "load_records",
    "save_records",
    "test_for",
    "status",
    "Status",
    "verified_records",
]

RECORDS_DIR = "verification"  # under snippets/: one <platform>.json per platform


@dataclass(frozen=True)
class Record:
    """One passing run of one program in one environment class.

    Attributes:
        sha256: :func:`content_hash` of the program when it passed.
        files: SHA-256 of each file that hash covers, by path relative to snippets/.
        torch: torch version (without a local build tag: ``"2.13.0"``).
        python: ``"major.minor"`` of the interpreter.
        backend: ``"gloo"`` or ``"nccl"``: what the job's process group used.
        device: ``"cpu"`` or ``"cuda"``.
        device_count: CUDA devices the job used, on all its nodes together (0 on CPU);
            fewer than the processes when processes shared a GPU (gloo); GPUs per
            node is ``device_count // nnodes``.
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
        launcher: what started the job: ``"local"`` (the launch line typed on this
            machine, one terminal per node) or ``"slurm"`` (submitted to a Slurm
            cluster, one job). Records from before it existed read as ``"local"``.
        platform: the platform file the record was read from (:func:`platform_name`);
            not written into the file, whose name says it.
        checks: what the passing tests covered: ``"claims"`` (every test of the
            program's module: the lesson's claims and the bare runs) or ``"bare"`` (only
            the bare runs and the harness run they reproduce, e.g. a program's CUDA path
            run with fewer processes than its claims need). A ``"bare"`` record never
            makes a program verified on its own; the badge names it as such.
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
    launcher: str = "local"
    checks: str = "claims"
    platform: str = ""

    @property
    def environment(self) -> str:
        """The environment class this record belongs to: ``"cpu-gloo"`` or ``"cuda-nccl"``."""
        return environment_class(self.device, self.backend)

    @property
    def key(self) -> str:
        """Where the record is filed among all platforms' records: ``"<platform>/<environment>"``."""
        return record_key(self.platform, self.environment)


def record_key(platform: str, environment: str) -> str:
    """The key of a platform's record of one environment class (:attr:`Record.key`)."""
    return f"{platform}/{environment}"


def platform_name(torch_version: str, machine: str, gpu_names: list[str] | tuple[str, ...] = ()) -> str:
    """The platform a session's records are filed under: the file name (without ``.json``).

    Args:
        torch_version: ``torch.__version__`` (a local tag such as ``+cu130`` is dropped).
        machine: the processor architecture, ``platform.machine()`` (``"x86_64"``).
        gpu_names: ``torch.cuda.get_device_name(i)`` of each visible GPU; empty for a
            machine without CUDA.

    Returns:
        ``"cpu-x86_64-torch2.13.0"``, or for GPUs their count and kind,
        ``"cuda-1xnvidia-h100-80gb-hbm3-x86_64-torch2.11.0"`` (several kinds are joined
        with ``+``); lower case: letters, digits, ``.``, ``_``, ``-`` and ``+`` only.
    """
    def slug(text: str) -> str:
        return re.sub(r"[^a-z0-9._]+", "-", text.lower()).strip("-")

    kinds: dict[str, int] = {}
    for name in gpu_names:
        kinds[slug(name)] = kinds.get(slug(name), 0) + 1
    device = "cuda-" + "+".join(f"{n}x{kind}" for kind, n in kinds.items()) if kinds else "cpu"
    return f"{device}-{slug(machine)}-torch{slug(torch_version.split('+')[0])}"


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


def program_files(program: Path) -> list[Path]:
    """Everything a program's content covers, sorted: the program, its local imports
    (:func:`local_imports`) and the files its launch lines name
    (:func:`coursekit.runspec.launch_files`, e.g. the batch script it submits). A reader
    needs exactly these files; a bare run's folder holds exactly these."""
    return sorted(set(local_imports(program)) | set(launch_files(program)))


# SHA-256 of a file; a program's files, kept until it or any of them changes (a module
# can start importing another one).
_digest = StatCache(lambda path: hashlib.sha256(path.read_bytes()).hexdigest())
_cached_imports = StatCache(program_files, sources=lambda program, files: files)


def cached_program_files(program: Path) -> list[Path]:
    """:func:`program_files`, kept until the program or any of its files changes (each
    language's build asks again for every program)."""
    return _cached_imports(program)


def content_hash(program: Path, snippets_dir: Path) -> tuple[str, dict[str, str]]:
    """SHA-256 over a program, its local imports and the files its launch line names.

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
    """All platforms' records: ``{program: {Record.key: Record}}`` (empty when there are none).

    Cached by each file's modification time and size: the build gate asks on every page
    of every language. Callers that change the result must copy it first.

    Raises:
        ValueError: a file is not valid JSON or a record lacks a field; the message
            names the file.
    """
    merged: dict[str, dict[str, Record]] = {}
    folder = snippets_dir / RECORDS_DIR
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        for program, envs in _records(path).items():
            merged.setdefault(program, {}).update({rec.key: rec for rec in envs.values()})
    return merged


def _read_records(path: Path) -> dict[str, dict[str, Record]]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return {prog: {env: Record(**{**rec, "platform": path.stem}) for env, rec in envs.items()} for prog, envs in raw.items()}
    except (json.JSONDecodeError, TypeError) as exc:
        raise ValueError(f"{path}: unreadable verification records ({exc}); restore it with git and re-run pytest") from None


_records = StatCache(_read_records)


# Fields added after records were first written, left out while they hold their default,
# so a record that did not change keeps its bytes (and older records read the same).
_OMITTED_DEFAULTS = {"launcher": "local", "checks": "claims"}


def _as_json(record: Record) -> dict:
    data = asdict(record)
    del data["platform"]  # the file's name
    return {k: v for k, v in data.items() if not (k in _OMITTED_DEFAULTS and v == _OMITTED_DEFAULTS[k])}


def save_records(snippets_dir: Path, records: dict[str, dict[str, Record]], platform: str) -> bool:
    """Write one platform's records (those with ``record.platform == platform``) to
    ``snippets/verification/<platform>.json``, sorted and indented for readable diffs,
    if they changed; other platforms' files are never touched.

    Returns:
        True when the file was written.
    """
    path = snippets_dir / RECORDS_DIR / f"{platform}.json"
    mine: dict[str, dict[str, dict]] = {}
    for program, envs in sorted(records.items()):
        for rec in sorted((r for r in envs.values() if r.platform == platform), key=lambda r: r.environment):
            mine.setdefault(program, {})[rec.environment] = _as_json(rec)
    text = json.dumps(mine, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
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
            runs passed, by :attr:`Record.key` (platform and environment).
        stale: True when records exist but none of them is current.
        digest: the program's :func:`content_hash` now.
    """

    current: dict[str, Record]
    stale: bool
    digest: str = ""

    @property
    def verified(self) -> bool:
        """Passed every test, as it is now, in at least one environment."""
        return any(rec.checks == "claims" for rec in self.current.values())


def status(program: str, snippets_dir: Path, records: dict[str, dict[str, Record]]) -> Status:
    """The verification status of one program (path relative to snippets/)."""
    digest, _ = content_hash(snippets_dir / program, snippets_dir)
    envs = records.get(program, {})
    current = {env: rec for env, rec in envs.items()
               if rec.sha256 == digest and rec.outcome == "passed" and rec.bare_runs > 0}
    return Status(current=current, stale=bool(envs) and not current, digest=digest)


def verified_records(st: Status) -> dict[str, Record]:
    """The current records that verify the program's claims (``checks == "claims"``)."""
    return {env: rec for env, rec in st.current.items() if rec.checks == "claims"}
