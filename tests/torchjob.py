"""The runner: launch a real torchrun job, bound it in time, explain its failures.

Facts used here are the measured ones in ``shared/TORCH-FACTS.md``: torchrun starts each
worker in a new session (so killing torchrun's process group does not reach them),
SIGTERM to torchrun ends the workers within about a second while SIGKILL orphans them,
and ``--standalone`` rendezvous on a free port, so jobs run side by side under xdist.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import torch

HARNESS = Path(__file__).parent / "harness"
GRACE_S = 5.0  # after the time limit: stack dumps, SIGTERM to torchrun, then SIGKILL
TAIL_LINES = 40


@dataclass
class RankLog:
    """One worker's captured output (one attempt, when torchrun restarted workers)."""

    local_rank: int
    attempt: int
    stdout: str
    stderr: str
    mtime: float = 0.0

    @property
    def failed(self) -> bool:
        """The worker printed a Python traceback."""
        return "Traceback (most recent call last)" in self.stderr


@dataclass
class JobResult:
    """What one torchrun job did.

    Attributes:
        argv: the command that ran.
        returncode: torchrun's exit status (None if it had to be killed).
        duration_s: wall time from launch to the end of the clean-up, in seconds.
        timed_out: the job overran its time limit and was stopped.
        agent_output: torchrun's own stdout and stderr.
        ranks: the workers' output, from torchrun's per-rank log files.
        records: harness records by global rank (last attempt wins), see
            ``tests/harness/sitecustomize.py``.
        leftovers: pids of processes of this job still alive after clean-up (they
            were killed; a non-empty list is a defect of the job or the runner).
        workdir: the folder the job ran in.
    """

    argv: list[str]
    returncode: int | None
    duration_s: float
    timed_out: bool
    agent_output: str
    ranks: list[RankLog] = field(default_factory=list)
    records: dict[int, dict] = field(default_factory=dict)
    leftovers: list[int] = field(default_factory=list)
    workdir: Path | None = None
    job_dir: Path | None = None
    world_size: int | None = None

    def stdout(self, local_rank: int, attempt: int = 0) -> str:
        """What one worker printed in one attempt (torchrun's per-rank log)."""
        logs = [r for r in self.ranks if r.local_rank == local_rank and r.attempt == attempt]
        assert len(logs) == 1, f"no log of local rank {local_rank}, attempt {attempt}\n{self.report()}"
        return logs[0].stdout

    def report(self) -> str:
        """A failure report: the first failing rank's traceback first, then every rank's tail."""
        head = f"$ {' '.join(self.argv)}\n"
        if self.timed_out:
            head += f"TIMED OUT after {self.duration_s:.1f} s; stacks of the ranks still running are in their stderr below\n"
        else:
            head += f"exit status {self.returncode} after {self.duration_s:.1f} s\n"
        parts = [head]
        first = self.first_failing()
        if first is not None:
            tb = first.stderr[first.stderr.index("Traceback (most recent call last)"):]
            parts.append(f"=== first failing: local rank {first.local_rank} (attempt {first.attempt}) ===\n{_tail(tb)}")
        for r in self.ranks:
            parts.append(f"=== local rank {r.local_rank}, attempt {r.attempt}: stdout ===\n{_tail(r.stdout)}")
            parts.append(f"=== local rank {r.local_rank}, attempt {r.attempt}: stderr ===\n{_tail(r.stderr)}")
        parts.append(f"=== torchrun ===\n{_tail(self.agent_output)}")
        return "\n".join(parts)

    def first_failing(self) -> RankLog | None:
        """The rank that failed first: torchrun's "Root Cause (first observed failure)",
        else the earliest-written traceback; None when no rank failed."""
        failing = [r for r in self.ranks if r.failed]
        if not failing:
            return None
        cause = re.search(r"Root Cause \(first observed failure\):.*?local_rank: (\d+)", self.agent_output, re.S)
        if cause:
            last_attempt = max(r.attempt for r in failing)
            for r in failing:
                if r.local_rank == int(cause.group(1)) and r.attempt == last_attempt:
                    return r
        return min(failing, key=lambda r: r.mtime)

    def check_exit(self) -> None:
        """Assert the launcher exited 0 within its limit and left no process running.

        Raises:
            AssertionError: with :meth:`report` as the message.
        """
        assert not self.timed_out and self.returncode == 0, self.report()
        assert not self.leftovers, f"processes left running: {self.leftovers}\n{self.report()}"

    def check(self, world_size: int) -> None:
        """Assert the job succeeded and did its work on every rank.

        Exit status 0 is not enough (a program can print "not enough GPUs" and exit
        0): every rank 0..world_size-1 must have left a harness record showing it
        joined the job and left the process group.

        Raises:
            AssertionError: with :meth:`report` as the message.
        """
        self.check_exit()
        missing = [r for r in range(world_size) if r not in self.records]
        assert not missing, f"no record from rank(s) {missing}: the program did not run its work there\n{self.report()}"
        for rank, rec in self.records.items():
            assert rec["world_size"] == world_size, f"rank {rank} ran with world size {rec['world_size']}, expected {world_size}"
            assert rec["destroyed"], f"rank {rank} never reached destroy_process_group\n{self.report()}"


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    rows = text.rstrip("\n").splitlines()
    cut = rows[-lines:]
    return ("…\n" if len(rows) > lines else "") + "\n".join(cut)


def _job_processes(popen: subprocess.Popen, pid_dir: Path) -> list[psutil.Process]:
    """torchrun and every worker of its job still alive, found by parentage and by the
    harness pid files (a worker orphaned by a killed torchrun has no parent to follow)."""
    procs: dict[int, psutil.Process] = {}
    try:
        root = psutil.Process(popen.pid)
        procs[root.pid] = root
        for child in root.children(recursive=True):
            procs[child.pid] = child
    except psutil.NoSuchProcess:
        pass
    for pid_file in pid_dir.glob("pid-*"):
        try:
            proc = psutil.Process(int(pid_file.read_text()))
            if pid_dir.as_posix() == proc.environ().get("COURSE_HARNESS_DIR"):
                procs[proc.pid] = proc
        except (psutil.Error, ValueError):
            continue
    alive = []
    for proc in procs.values():
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(proc)
        except psutil.Error:
            continue
    return alive


def _stop(popen: subprocess.Popen, pid_dir: Path) -> None:
    """Stop a job that overran: dump every rank's stack, SIGTERM torchrun, then SIGKILL the rest."""
    for proc in _job_processes(popen, pid_dir):
        if proc.pid != popen.pid:
            try:
                proc.send_signal(signal.SIGUSR1)  # faulthandler writes the stack to the rank's stderr
            except psutil.Error:
                pass
    time.sleep(1.0)
    popen.send_signal(signal.SIGTERM)
    try:
        popen.wait(timeout=GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    _kill_all(popen, pid_dir)


def _kill_all(popen: subprocess.Popen, pid_dir: Path) -> list[int]:
    """SIGKILL every process of the job that is still alive; return their pids."""
    alive = _job_processes(popen, pid_dir)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=GRACE_S)
    if popen.poll() is None:
        popen.wait()
    return [p.pid for p in alive if p.pid != popen.pid]


def _read_rank_logs(log_dir: Path) -> list[RankLog]:
    logs = []
    for rank_dir in sorted(log_dir.glob("*/attempt_*/*")):
        if not rank_dir.is_dir() or not rank_dir.name.isdigit():
            continue
        attempt = int(rank_dir.parent.name.removeprefix("attempt_"))
        read = lambda name: (rank_dir / name).read_text(errors="replace") if (rank_dir / name).is_file() else ""
        stderr = rank_dir / "stderr.log"
        mtime = stderr.stat().st_mtime if stderr.is_file() else 0.0
        logs.append(RankLog(int(rank_dir.name), attempt, read("stdout.log"), read("stderr.log"), mtime))
    logs.sort(key=lambda r: (r.attempt, r.local_rank))
    return logs


def _read_records(pid_dir: Path) -> dict[int, dict]:
    records: dict[int, dict] = {}
    for path in sorted(pid_dir.glob("rank-*.pt"), key=lambda p: int(p.stem.split("-")[2])):
        rec = torch.load(path, weights_only=False)
        records[rec["rank"]] = rec
    return records


def launch(argv: list[str], cwd: Path, extra_env: dict[str, str] | None = None,
           plugins: tuple[str, ...] = ()) -> subprocess.Popen:
    """Start a torchrun command with the harness, per-rank logs and records under
    ``cwd/.job`` (each node of a multi-node job runs in its own ``cwd``); :func:`finish`
    enforces the time limit.

    Args:
        argv: the command, run exactly as given; logging and the harness are switched on
            through the environment (torchrun reads ``PET_<OPTION>`` for its options).
        cwd: the folder it runs in.
        extra_env: variables added to the job's environment.
        plugins: recorder modules from ``tests/harness`` to load in every worker.
    """
    job_dir = cwd / ".job"
    (job_dir / "logs").mkdir(parents=True, exist_ok=True)
    (job_dir / "harness").mkdir(exist_ok=True)
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.pathsep.join([str(HARNESS), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        COURSE_HARNESS_DIR=str(job_dir / "harness"),
        PET_LOG_DIR=str(job_dir / "logs"),
        PET_REDIRECTS="3",
        OMP_NUM_THREADS="1",
        COURSE_HARNESS_PLUGINS=",".join(plugins),
        PYTHONUNBUFFERED="1",
        PYTHONFAULTHANDLER="1",
    )
    env.update(extra_env or {})
    argv = list(argv)
    if argv and argv[0] == "torchrun":  # the venv's torchrun, even when PATH lacks the venv
        argv[0] = str(Path(sys.executable).with_name("torchrun"))
    return subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True, text=True,
    )


def finish(popen: subprocess.Popen, argv: list[str], cwd: Path, time_limit_s: float, started: float) -> JobResult:
    """Wait for a launched job within its time limit (seconds since ``started``, a
    ``time.monotonic()`` reading), stop it if it overruns, collect its output."""
    job_dir = cwd / ".job"
    timed_out = False
    try:
        out, _ = popen.communicate(timeout=max(0.0, time_limit_s - (time.monotonic() - started)))
    except subprocess.TimeoutExpired:
        timed_out = True
        _stop(popen, job_dir / "harness")
        out, _ = popen.communicate()
    # A job that ended by itself must have left nothing behind; one the runner stopped
    # must have nothing left after the stop. Either way survivors are killed and reported.
    leftovers = _kill_all(popen, job_dir / "harness")
    return JobResult(
        argv=list(argv),
        returncode=None if timed_out else popen.returncode,
        duration_s=time.monotonic() - started,
        timed_out=timed_out,
        agent_output=out or "",
        ranks=_read_rank_logs(job_dir / "logs"),
        records=_read_records(job_dir / "harness"),
        leftovers=leftovers,
        workdir=cwd,
        job_dir=job_dir,
    )


def run_job(argv: list[str], cwd: Path, time_limit_s: float, extra_env: dict[str, str] | None = None,
            plugins: tuple[str, ...] = ()) -> JobResult:
    """Run one torchrun job to its end or its time limit.

    Args:
        argv: the command, e.g. ``["torchrun", "--standalone", "--nproc-per-node=2", "train.py"]``.
        cwd: the folder it runs in (a copy of the snippet folder).
        time_limit_s: wall-clock limit in seconds; past it every rank's Python stack is
            dumped to its log, torchrun gets SIGTERM, and after :data:`GRACE_S` seconds
            every process of the job is SIGKILLed.
        extra_env: variables added to the job's environment.
        plugins: recorder modules from ``tests/harness`` to load in every worker.

    Returns:
        The :class:`JobResult`; use :meth:`JobResult.check` to assert success.
    """
    started = time.monotonic()
    popen = launch(argv, cwd, extra_env, plugins)
    return finish(popen, argv, cwd, time_limit_s, started)


def pids_alive(pids: list[int]) -> list[int]:
    """The pids of this list that still run (zombies excluded)."""
    alive = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            continue
    return alive


def worker_pids(result: JobResult) -> list[int]:
    """Every worker pid the harness saw start in this job."""
    return [int(p.read_text()) for p in (result.job_dir / "harness").glob("pid-*")]



# Multi-node jobs on one machine: several torchrun agents, each in its own folder.

_SHELL_VAR = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_]\w*)(?::-(?P<default>[^}]*))?\}|(?P<bare>[A-Za-z_]\w*))")


def expand_vars(argv: list[str] | tuple[str, ...], values: dict[str, str]) -> list[str]:
    """Expand the shell-style variables of a launch command the way a POSIX shell would.

    ``$NAME`` and ``${NAME}`` become ``values[NAME]``; ``${NAME:-default}`` becomes
    ``values[NAME]`` when it is set and not empty, else ``default``. Only ``values`` is
    read, never this process's environment, so a variable exported in the developer's
    shell cannot change what a test runs.

    Raises:
        ValueError: a variable without a default is missing from ``values``.
    """
    def one(match: re.Match) -> str:
        name = match.group("braced") or match.group("bare")
        if values.get(name):
            return values[name]
        if match.group("default") is not None:
            return match.group("default")
        raise ValueError(f"launch command uses ${name} without a default; pass a value for it to expand_vars")

    return [_SHELL_VAR.sub(one, arg) for arg in argv]


def run_nodes(commands: list[list[str]], cwds: list[Path], time_limit_s: float,
              extra_env: dict[str, str] | None = None, plugins: tuple[str, ...] = (),
              node_envs: list[dict[str, str]] | None = None) -> list[JobResult]:
    """Run one torchrun agent per node, all at once, within one time limit.

    Each agent runs in its own folder (``cwds[i]``, a separate copy of the program, as
    on separate machines) with its logs and harness records under ``cwds[i]/.job``. A
    node that overruns the limit is stopped like a single job (:func:`run_job`).

    Args:
        commands: the launch command of each node.
        cwds: the folder each node runs in.
        time_limit_s: wall-clock limit for the whole multi-node job, in seconds.
        extra_env: variables added to every node's environment.
        plugins: recorder modules from ``tests/harness`` to load in every worker.
        node_envs: variables added to one node's environment, per node.

    Returns:
        One :class:`JobResult` per node, in the order of ``commands``; the records of
        each hold only that node's global ranks.
    """
    started = time.monotonic()
    node_envs = node_envs or [{} for _ in commands]
    popens = [launch(argv, cwd, {**(extra_env or {}), **env}, plugins)
              for argv, cwd, env in zip(commands, cwds, node_envs, strict=True)]
    return [finish(popen, argv, cwd, time_limit_s, started) for popen, argv, cwd in zip(popens, commands, cwds)]
