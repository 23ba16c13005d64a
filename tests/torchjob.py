"""The runner: launch a page's torchrun command, bound it in time, explain its failures.

Two ways to run a launch line (``coursekit.runspec.LaunchLine``), both with ``bash -c``
exactly as the page shows it, in an environment that holds only ``PATH`` (the virtual
environment's ``bin`` first) and, where the machine has GPUs, ``CUDA_VISIBLE_DEVICES``
(:data:`HARDWARE_ENV`): nothing else from the developer's shell reaches a job.

* :func:`run_bare` -- what a reader does: the line in a fresh folder that holds only the
  program and its local imports, no harness, no test plugin. It passes when every agent
  exits 0 within the time limit and no process is left.
* :func:`run_job` -- the same line with the observation-only harness of
  ``tests/harness/`` (its README says what each hook observes and why it changes
  nothing): per-rank logs and records the tests read. It adds only the variables in
  :data:`OBSERVATION_ENV`.

Facts used here are the measured ones in ``shared/TORCH-FACTS.md``: torchrun starts each
worker in a new session (so killing torchrun's process group does not reach them),
SIGTERM to torchrun ends the workers within about a second while SIGKILL orphans them,
and ``--standalone`` rendezvous on a free port, so jobs run side by side under xdist.
Workers are found by parentage, by the harness's pid files, and by their working folder
(every worker of a job runs in the job's folder), so even an orphan is never missed.

A job whose page says it hangs (``outcome: hangs`` with ``blocked-in:`` lines, see
``coursekit.runspec``) is watched while it runs (:class:`Hang`): every process of the job
is read from outside with ``py-spy dump --nonblocking`` (it reads the process's memory
without stopping it: the program does exactly what it does unwatched), and once every
party has been seen where the page says for :data:`SETTLE_S` seconds the job is stopped
as at its time limit. A job seen anywhere else waits out its limit as before.

Slurm (``tests/slurm_launcher.py``): a line that submits a batch script (``sbatch
slurm_train.sbatch``) is run the same way and then followed as the Slurm job it
submitted, by polling, to its end or its time limit (then ``scancel``). With
:data:`SLURM` set to a wrapping backend (the ``--slurm-partition`` option), every other
launch line runs inside a Slurm job instead of ``bash -c`` on this machine: one job per
launch, one node per terminal. Either way the submitting environment also holds the
cluster's ``SLURM_CONF`` (:data:`CLUSTER_ENV`), and the job holds what Slurm itself sets,
as a reader's does.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import torch

from coursekit.runspec import BlockedIn, LaunchLine, RunSpec, parse_line
from coursekit.verification import program_files

HARNESS = Path(__file__).parent / "harness"
GRACE_S = 5.0  # after the time limit: stack dumps, SIGTERM to torchrun, then SIGKILL
# How long every party of a hang-by-design job must be seen, without a break, where its
# page says (blocked-in:) before the hang counts as proven and the job is stopped early.
# Measured (2 cores, torch 2.13 CPU, other jobs running beside): each hang program and
# the passing programs they break (pipeline_parallel.py, uneven_inputs.py) run bare 3
# times (stuck.py's third run caught a copy broken on purpose and is left out), every worker and agent read with py-spy dump --nonblocking every ~0.02 s
# (27,890 dumps; median 0.013 s each, at most 0.21 s). In the hang programs every rank
# reached its blocked-in line 3.0-10.5 s after launch and stayed there, every sample, to
# the end of the 40 s watch; multinode_standalone.py's agents were in next_rendezvous
# from 2-4 s on in every sample, and no worker ever started. No rank was ever seen on a
# blocked-in line before the one visit that never ended. The longest a rank of any run
# stayed on one line and then moved on was 4.3 s (DDP's constructor in uneven_inputs.py,
# waiting for the other rank), next 3.8 s (pipeline_parallel.py's first step): 8 s is
# about twice the longest pause of a job that was not hung.
SETTLE_S = 8.0
POLL_S = 0.5  # between two rounds of py-spy dumps of a watched job
PY_SPY = "py-spy"  # looked up in VENV_BIN (the test dependencies install it there)
TAIL_LINES = 40
GLOO_THREADS = frozenset({"pt_gloo_runloop", "gloo_tcp_loop"})  # the names gloo gives its threads (/proc/<pid>/task/*/comm)
VENV_BIN = Path(sys.executable).parent
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"

# What the harness run adds to the reader's environment, all of it for observation:
# the harness on the import path, where it writes, which recorders it loads, and
# torchrun's per-rank log files (PET_LOG_DIR, PET_REDIRECTS are torchrun's own
# --log-dir and --redirects: where output goes, not what the program does).
OBSERVATION_ENV = frozenset({"PYTHONPATH", "COURSE_HARNESS_DIR", "COURSE_HARNESS_PLUGINS", "PET_LOG_DIR", "PET_REDIRECTS"})
# Which devices a job may use: on a machine with fewer GPUs than processes the runner
# hides them, so the program's own "CUDA if available" choice runs it on CPU and gloo.
HARDWARE_ENV = frozenset({"CUDA_VISIBLE_DEVICES"})
# Where Slurm's commands find the cluster (its slurm.conf): a site sets it for its users
# (or keeps the file at the default path); the test cluster's is in its own folder.
CLUSTER_ENV = frozenset({"SLURM_CONF"})
# The Slurm backend (tests/slurm_launcher.SlurmBackend) sbatch lines are submitted through
# and, when it wraps, every launch line; None: no cluster in this session.
SLURM = None


class PageEnvironmentError(AssertionError):
    """A test tried to give a job a variable that its page does not show the reader."""


@dataclass
class RankLog:
    """One worker's captured output (one attempt, when torchrun restarted workers)."""

    local_rank: int
    attempt: int
    stdout: str
    stderr: str
    mtime: float = 0.0
    rank: int | None = None  # the global rank, when the harness recorded which log is whose
    run: str = ""  # the agent's run folder (one per agent, i.e. per node)

    @property
    def failed(self) -> bool:
        """The worker printed a Python traceback."""
        return "Traceback (most recent call last)" in self.stderr


@dataclass
class JobResult:
    """What one torchrun agent (one node of a job) did.

    Attributes:
        line: the launch line that ran (``bash -c`` of its text).
        returncode: the agent's exit status (None if it had to be stopped).
        duration_s: wall time from launch to the end of the clean-up, in seconds (for
            a Slurm job, less the time it waited in the queue).
        timed_out: the job did not end by itself: it overran its time limit, or it was
            proven hung where its page says (:attr:`hang`), and the runner stopped it.
        agent_output: torchrun's stdout and stderr; in a bare run the workers write to
            the same terminal, so their output is here too (see :attr:`stdout_text`).
        stdout_text: everything written to the agent's stdout (workers included).
        env: the environment the line ran with.
        bare: True for a bare run (no harness, no per-rank logs, no records).
        ranks: the workers' output, from torchrun's per-rank log files (harness runs).
        records: harness records by global rank (last attempt wins), see
            ``tests/harness/sitecustomize.py``.
        leftovers: pids of processes of this job still alive after it ended or was
            stopped (they were killed; a non-empty list is a defect of the job).
        workdir: the folder the job ran in.
        job_dir: where the harness run keeps logs and records (beside ``workdir``).
        world_size: set by the caller once known.
        slurm_job_id: the Slurm job it ran in (None on this machine).
        slurm_state: that job's final state (``COMPLETED``, ``FAILED``, ``CANCELLED``...).
        hang: for a job watched for its page's hang (:class:`Hang`), the proof that
            stopped it before its limit (every party's stack); None otherwise.
    """

    line: LaunchLine
    returncode: int | None
    duration_s: float
    timed_out: bool
    agent_output: str
    stdout_text: str = ""
    env: dict[str, str] = field(default_factory=dict)
    bare: bool = False
    ranks: list[RankLog] = field(default_factory=list)
    records: dict[int, dict] = field(default_factory=dict)
    leftovers: list[int] = field(default_factory=list)
    workdir: Path | None = None
    job_dir: Path | None = None
    world_size: int | None = None
    slurm_job_id: int | None = None
    slurm_state: str | None = None
    hang: HangProof | None = None

    @property
    def argv(self) -> tuple[str, ...]:
        """The command words of the launch line."""
        return self.line.argv

    def stdout(self, local_rank: int, attempt: int = 0) -> str:
        """What one worker printed in one attempt (torchrun's per-rank log)."""
        logs = [r for r in self.ranks if r.local_rank == local_rank and r.attempt == attempt]
        assert len(logs) == 1, f"no log of local rank {local_rank}, attempt {attempt}\n{self.report()}"
        return logs[0].stdout

    def report(self) -> str:
        """A failure report: the first failing rank's traceback first, then every rank's tail."""
        head = f"$ {self.line.text}    # {'bare run' if self.bare else 'with the harness'} in {self.workdir}\n"
        if self.slurm_job_id is not None:
            head += f"Slurm job {self.slurm_job_id}: {self.slurm_state}\n"
        if self.hang is not None:
            head += (f"TIMED OUT: stopped after {self.duration_s:.1f} s, before its time limit, once every process "
                     f"had been seen where the page says it hangs for {self.hang.settled_s:.1f} s (py-spy, below)"
                     f"{'; stacks of the ranks still running are in their stderr too' if not self.bare else ''}\n")
        elif self.timed_out:
            head += f"TIMED OUT after {self.duration_s:.1f} s; stacks of the ranks still running are in their stderr below\n"
        else:
            head += f"exit status {self.returncode} after {self.duration_s:.1f} s\n"
        if self.leftovers:
            head += f"processes left running (killed): {self.leftovers}\n"
        parts = [head]
        errors = _error_lines(self.agent_output) if self.bare else []
        if errors:  # a bare run's workers share torchrun's terminal: show their last words first
            parts.append("=== error lines of torchrun and its workers ===\n" + "\n".join(errors[-TAIL_LINES:]))
        first = self.first_failing()
        if first is not None:
            tb = first.stderr[first.stderr.index("Traceback (most recent call last)"):]
            parts.append(f"=== first failing: local rank {first.local_rank} (attempt {first.attempt}) ===\n{_tail(tb)}")
        for r in self.ranks:
            parts.append(f"=== local rank {r.local_rank}, attempt {r.attempt}: stdout ===\n{_tail(r.stdout)}")
            parts.append(f"=== local rank {r.local_rank}, attempt {r.attempt}: stderr ===\n{_tail(r.stderr)}")
        parts.append(f"=== torchrun{' and its workers' if self.bare else ''} ===\n{_tail(self.agent_output, TAIL_LINES * 2)}")
        if self.hang is not None:
            parts += [f"=== {who} (pid {pid}), py-spy dump ===\n{_tail(text)}" for (who, pid), text in sorted(self.hang.stacks.items())]
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
        """Assert the agent exited 0 within its limit and left no process running, and,
        in a harness run, that the harness recorded what it should on every rank (each
        recorder's patch in place: no ``harness_errors``, nothing ``unpatched``) and that
        no rank still ran a gloo thread once its code had finished.

        The last is lesson 4's teardown claim (docs/torchrun-launching.md, "End every
        worker cleanly"): in torch 2.13 a gloo process group's threads
        (:data:`GLOO_THREADS`) stop only when the group object is freed, and
        ``destroy_process_group()`` frees it only when nothing else holds it; a thread
        left running while the interpreter shuts down can abort the process
        (``terminate called without an active exception``), now and then, so a bare run
        may pass by luck. The harness reads the thread names at exit
        (``threads_at_exit``), and imports nothing ahead of the program that imports
        ``torch.distributed.nn`` or holds a process group (``tests/harness/README.md``),
        so what it sees is what the bare run does. A line of several torchrun commands
        (``dcp_resume.py``: two processes, then three) leaves each rank's record of its
        last command only, so only that command's harness record and teardown are checked.

        Raises:
            AssertionError: with :meth:`report` as the message.
        """
        assert not self.timed_out and self.returncode == 0, self.report()
        assert not self.leftovers, f"processes left running: {self.leftovers}\n{self.report()}"
        for rank, rec in sorted(self.records.items()):
            # the harness itself: every recorder's wrapper in place (tests/harness/sitecustomize.py)
            problems = rec.get("harness_errors", []) + [f"{name} was imported but never patched"
                                                         for name in rec.get("unpatched", [])]
            assert not problems, f"rank {rank}: the harness did not record what it should: {problems}\n{self.report()}"
            left = [t for t in rec["threads_at_exit"] if t in GLOO_THREADS]
            assert not left, (f"rank {rank}: gloo threads {left} were still running when the program's code had "
                              f"finished: something still held the process group after destroy_process_group() "
                              f"(a DDP model, torch.distributed.nn imported after init_process_group, a DTensor "
                              f"cache holding a mesh, or a reference cycle left uncollected)\n{self.report()}")

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


_ERROR_LINE = re.compile(r"terminate called|what\(\):|Error|Exception|Fatal Python error|Aborted|Traceback")


def _error_lines(text: str) -> list[str]:
    """The lines of ``text`` that say what went wrong (C++ ``terminate called``, gloo's
    ``what():``, Python errors), without torchrun's own failure table."""
    return [line for line in text.splitlines() if _ERROR_LINE.search(line) and "ChildFailedError" not in line
            and "errors/__init__.py" not in line]


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    rows = text.rstrip("\n").splitlines()
    cut = rows[-lines:]
    return ("…\n" if len(rows) > lines else "") + "\n".join(cut)


# ---------------------------------------------------------------------------------------
# Environments and folders


def reader_env(hardware: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a reader's terminal gives a launch line: ``PATH`` with the
    virtual environment first (the README's set-up), plus the device selection
    ``hardware`` (only :data:`HARDWARE_ENV` names)."""
    hardware = dict(hardware or {})
    unknown = set(hardware) - HARDWARE_ENV
    if unknown:
        raise PageEnvironmentError(f"{sorted(unknown)} are not device selections; only {sorted(HARDWARE_ENV)} may be set besides the page's variables")
    return {"PATH": f"{VENV_BIN}:{SYSTEM_PATH}", **hardware}


def check_page_env(line: LaunchLine, env: dict[str, str], observation: bool, cluster: bool = False) -> None:
    """Assert that a job's environment holds nothing its page does not show.

    Allowed: ``PATH``, :data:`HARDWARE_ENV`, the variables the launch line itself sets
    or reads, with ``observation`` the harness's :data:`OBSERVATION_ENV`, and with
    ``cluster`` (a job submitted to Slurm) the cluster's :data:`CLUSTER_ENV`.

    Raises:
        PageEnvironmentError: naming the variables that are not on the page.
    """
    allowed = ({"PATH"} | HARDWARE_ENV | line.variables | (OBSERVATION_ENV if observation else set())
               | (CLUSTER_ENV if cluster else set()))
    extra = sorted(set(env) - allowed)
    if extra:
        raise PageEnvironmentError(
            f"the job for {line.text!r} would get {extra}, which its page does not show; "
            "put them on the launch line or stop setting them")


def bare_folder(program: Path, into: Path) -> Path:
    """A fresh folder holding only the program, the local modules it imports and the
    files its launch line names (a batch script), as a reader who copied them from the
    page has; returns the folder."""
    into.mkdir(parents=True, exist_ok=True)
    for path in program_files(program):
        shutil.copy(path, into / path.name)
    return into


# ---------------------------------------------------------------------------------------
# Processes


def _job_processes(popen: subprocess.Popen, pid_dir: Path | None, cwd: Path) -> list[psutil.Process]:
    """The agent and every worker of its job still alive: by parentage, by the harness
    pid files, and by working folder (an orphaned worker has no parent to follow)."""
    procs: dict[int, psutil.Process] = {}
    try:
        if popen.pid is not None:  # a Slurm job has no local parent process to follow
            root = psutil.Process(popen.pid)
            procs[root.pid] = root
            for child in root.children(recursive=True):
                procs[child.pid] = child
    except psutil.NoSuchProcess:
        pass
    if pid_dir is not None:
        for pid_file in pid_dir.glob("pid-*"):
            try:
                proc = psutil.Process(int(pid_file.read_text()))
                if pid_dir.as_posix() == proc.environ().get("COURSE_HARNESS_DIR"):
                    procs[proc.pid] = proc
            except (psutil.Error, ValueError):
                continue
    folder = str(cwd.resolve())
    for proc in psutil.process_iter():
        try:
            if proc.pid not in procs and proc.cwd() == folder:
                procs[proc.pid] = proc
        except psutil.Error:
            continue
    alive = []
    for proc in procs.values():
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(proc)
        except psutil.Error:
            continue
    return alive


def job_processes(job: Launched) -> list[psutil.Process]:
    """The live processes of a launched line on this machine: its agent and workers, by
    parentage, harness pid files and working folder (a Slurm job of the local cluster
    has no local parent; its processes are found by their folder)."""
    return _job_processes(job.popen, job.job_dir / "harness" if job.job_dir else None, job.cwd)


def _stop(popen: subprocess.Popen, pid_dir: Path | None, cwd: Path) -> None:
    """Stop a job that overran: dump every rank's stack (harness runs: faulthandler on
    SIGUSR1), SIGTERM the agent, then SIGKILL the rest."""
    if pid_dir is not None:
        for proc in _job_processes(popen, pid_dir, cwd):
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
    _kill_all(popen, pid_dir, cwd)


def _kill_all(popen: subprocess.Popen, pid_dir: Path | None, cwd: Path) -> list[int]:
    """SIGKILL every process of the job that is still alive; return their pids."""
    alive = _job_processes(popen, pid_dir, cwd)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=GRACE_S)
    if popen.poll() is None:
        popen.wait()
    return [p.pid for p in alive if p.pid != popen.pid]


# ---------------------------------------------------------------------------------------
# Watching a hang-by-design job


_PY_SPY_THREAD = re.compile(r'^Thread \S+ \((?:idle|active)[^)]*\): "MainThread"$(?P<frames>.*?)(?=^Thread |\Z)', re.M | re.S)
_PY_SPY_FRAME = re.compile(r"^\s+(?P<func>.+?) \((?P<file>[^()]+):(?P<line>\d+)\)$", re.M)


def main_thread_frames(dump: str) -> list[tuple[str, str, int]]:
    """The main thread's frames in a ``py-spy dump``, innermost first, as
    ``(function's qualified name, file, line)``; empty when the dump has no main thread."""
    m = _PY_SPY_THREAD.search(dump)
    if m is None:
        return []
    return [(f["func"], f["file"], int(f["line"])) for f in _PY_SPY_FRAME.finditer(m["frames"])]


def py_spy_dump(pid: int) -> str | None:
    """``py-spy dump --nonblocking --pid PID``: the process's Python stacks, read from its
    memory without stopping it (nothing the program does changes); None where py-spy
    cannot read it (it ended, or this user may not trace it)."""
    try:
        done = subprocess.run([str(VENV_BIN / PY_SPY), "dump", "--nonblocking", "--pid", str(pid)],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


@dataclass
class HangProof:
    """What proved a watched job hung where its page says.

    Attributes:
        stacks: the last ``py-spy dump`` of every process watched, by
            ``("rank N" or "agent", pid)``.
        settled_s: seconds every party had been seen there without a break (at least
            :data:`SETTLE_S`).
        at_s: seconds from the launch to the proof.
    """

    stacks: dict[tuple[str, int], str]
    settled_s: float
    at_s: float


@dataclass(frozen=True)
class Hang:
    """Where a hang-by-design job holds each of its processes (its page's ``blocked-in:``
    lines), and the test of whether a running job is there now.

    Attributes:
        program: the program's file name; a rank's place is the innermost frame in a file
            of that name on its main thread's stack.
        blocked_in: the page's ``blocked-in:`` lines (``coursekit.runspec.BlockedIn``).
        world_size: ranks of the jobs watched together (every node of a multi-node job).
    """

    program: str
    blocked_in: tuple[BlockedIn, ...]
    world_size: int

    @classmethod
    def of(cls, spec: RunSpec, world_size: int) -> Hang | None:
        """The hang to watch for in a job of ``spec``'s program with ``world_size`` ranks;
        None where there is nothing to watch: an outcome other than ``hangs``, no
        ``blocked-in:`` line, or no py-spy beside this Python (the job then waits out its
        time limit)."""
        if spec.outcome != "hangs" or not spec.blocked_in or not (VENV_BIN / PY_SPY).is_file():
            return None
        return cls(spec.program.name, spec.blocked_in, world_size)

    def place(self, who: str | int) -> BlockedIn | None:
        """The ``blocked-in:`` line for a rank (its own, else ``other ranks``) or for
        ``"every agent"``; None when the page names no place for it."""
        if who == "every agent":
            return next((b for b in self.blocked_in if b.who == who), None)
        return next((b for b in self.blocked_in if b.rank == who), None) or next(
            (b for b in self.blocked_in if b.who == "other ranks"), None)

    def _is_there(self, who: str | int, dump: str | None) -> bool:
        place = self.place(who)
        frames = main_thread_frames(dump or "")
        if place is None or not frames:
            return False
        if place.line is None:  # an agent: the named function is on its stack
            return any(func == place.where for func, _, _ in frames)
        own = [line for _, file, line in frames if Path(file).name == self.program]
        return bool(own) and own[0] == place.line

    def observe(self, jobs: list[Launched]) -> dict[tuple[str, int], str] | None:
        """One look at every process of the running ``jobs``: their stacks when every
        party is where the page says (each rank 0..world_size-1 exactly once where ranks
        are named, no worker at all where only agents are, and each job's agents where
        ``every agent`` says), else None.

        Each process's role is read from outside: a worker has ``RANK`` in its
        environment (``/proc/PID/environ``), an agent runs ``torchrun``."""
        named_ranks = any(b.who != "every agent" for b in self.blocked_in)
        agents_place = self.place("every agent")
        stacks: dict[tuple[str, int], str] = {}
        ranks: list[int] = []
        for job in jobs:
            agents = 0
            for proc in job_processes(job):
                try:
                    env, argv = proc.environ(), proc.cmdline()
                except psutil.Error:
                    return None
                if "RANK" in env:
                    if not named_ranks or not env["RANK"].isdigit():
                        return None  # a worker runs where the page says none starts
                    rank = int(env["RANK"])
                    dump = py_spy_dump(proc.pid)
                    if not self._is_there(rank, dump):
                        return None
                    ranks.append(rank)
                    stacks[(f"rank {rank}", proc.pid)] = dump
                elif any(word.endswith("torchrun") for word in argv[:2]):
                    agents += 1
                    if agents_place is not None:
                        dump = py_spy_dump(proc.pid)
                        if not self._is_there("every agent", dump):
                            return None
                        stacks[("agent", proc.pid)] = dump
            if agents_place is not None and agents == 0:
                return None
        if named_ranks and sorted(ranks) != list(range(self.world_size)):
            return None
        return stacks


def _queued(popen) -> float:
    """Seconds a Slurm job waited in the queue (0 for a local agent)."""
    return popen.queued_s if getattr(popen, "slurm_job_id", None) is not None else 0.0


def await_hang(jobs: list[Launched], hang: Hang, time_limit_s: float, started: float) -> HangProof | None:
    """Watch running jobs, every :data:`POLL_S` seconds, until every party has been seen
    where the page says for :data:`SETTLE_S` seconds without a break.

    Args:
        jobs: the agents of one job (one per node), launched at ``started``.
        hang: where the page says they hang.
        time_limit_s: the job's limit in seconds (queue time of a Slurm job not counted).
        started: a ``time.monotonic()`` reading at the launch.

    Returns:
        The :class:`HangProof`; None when a job ended first or the limit came first (the
        caller then goes on exactly as without watching).
    """
    since = None
    while True:
        if any(job.popen.poll() is not None for job in jobs):
            return None
        if time.monotonic() - started - _queued(jobs[0].popen) >= time_limit_s:
            return None
        stacks = hang.observe(jobs)
        now = time.monotonic()
        if stacks is None:
            since = None
        elif since is None:
            since = now
        elif now - since >= SETTLE_S:
            return HangProof(stacks, now - since, now - started - _queued(jobs[0].popen))
        time.sleep(POLL_S)


def _read_rank_logs(*log_dirs: Path) -> list[RankLog]:
    """torchrun's per-rank logs anywhere under these folders
    (``<run>/attempt_<n>/<local rank>/stdout.log``), one :class:`RankLog` each."""
    logs = []
    for log_dir in log_dirs:
        for rank_dir in sorted(log_dir.rglob("attempt_*/*")):
            if not rank_dir.is_dir() or not rank_dir.name.isdigit() or not rank_dir.parent.name.startswith("attempt_"):
                continue
            attempt = int(rank_dir.parent.name.removeprefix("attempt_"))
            read = lambda name: (rank_dir / name).read_text(errors="replace") if (rank_dir / name).is_file() else ""
            stderr = rank_dir / "stderr.log"
            mtime = stderr.stat().st_mtime if stderr.is_file() else 0.0
            logs.append(RankLog(int(rank_dir.name), attempt, read("stdout.log"), read("stderr.log"), mtime,
                                run=str(rank_dir.parent.parent)))
    logs.sort(key=lambda r: (r.attempt, r.run, r.local_rank))
    return logs


def _assign_ranks(logs: list[RankLog], records: dict[int, dict]) -> None:
    """Give each log its global rank, from the log folder each rank's harness record
    names (torchrun's ``TORCHELASTIC_ERROR_FILE`` lies in it)."""
    by_folder = {rec["log_dir"]: rank for rank, rec in records.items() if rec.get("log_dir")}
    for log in logs:
        folder = os.path.join(log.run, f"attempt_{log.attempt}", str(log.local_rank))
        log.rank = by_folder.get(folder, log.rank)


def _read_records(pid_dir: Path) -> dict[int, dict]:
    records: dict[int, dict] = {}
    for path in sorted(pid_dir.glob("rank-*.pt"), key=lambda p: int(p.stem.split("-")[2])):
        rec = torch.load(path, weights_only=False)
        records[rec["rank"]] = rec
    return records


# ---------------------------------------------------------------------------------------
# Launching


@dataclass
class Launched:
    """A started agent: what :func:`finish` needs to wait for it and collect its output."""

    popen: subprocess.Popen
    line: LaunchLine
    cwd: Path
    env: dict[str, str]
    job_dir: Path | None  # None for a bare run
    stdout_path: Path
    stderr_path: Path


def _as_line(line: LaunchLine | str) -> LaunchLine:
    return line if isinstance(line, LaunchLine) else parse_line(line)


def job_env(line: LaunchLine, cwd: Path, *, bare: bool, hardware: dict[str, str] | None,
            plugins: tuple[str, ...]) -> tuple[dict[str, str], Path | None]:
    """The environment one agent's line runs with, and its harness folder (None bare):
    :func:`reader_env`, plus :data:`OBSERVATION_ENV` for a harness run."""
    env = reader_env(hardware)
    job_dir = None
    if not bare:
        job_dir = cwd.parent / f"{cwd.name}.job"
        (job_dir / "logs").mkdir(parents=True, exist_ok=True)
        (job_dir / "harness").mkdir(exist_ok=True)
        env.update(
            PYTHONPATH=str(HARNESS),
            COURSE_HARNESS_DIR=str(job_dir / "harness"),
            COURSE_HARNESS_PLUGINS=",".join(plugins),
            PET_LOG_DIR=str(job_dir / "logs"),
            PET_REDIRECTS="3",
        )
    elif plugins:
        raise ValueError("a bare run loads no recorders")
    return env, job_dir


def _output_paths(cwd: Path) -> tuple[Path, Path]:
    # Output goes to files beside the folder, not pipes: a leftover process holding a
    # pipe open would make a reader of the pipe wait for it.
    return cwd.parent / f"{cwd.name}.stdout", cwd.parent / f"{cwd.name}.stderr"


def launch(line: LaunchLine | str, cwd: Path, *, bare: bool = False, hardware: dict[str, str] | None = None,
           plugins: tuple[str, ...] = ()) -> Launched:
    """Start one agent: ``bash -c`` of the launch line in ``cwd``; :func:`finish` waits.

    A line that submits a batch script, or any line while :data:`SLURM` wraps launches,
    goes to the Slurm cluster instead (``slurm_launcher.SlurmBackend.launch``): the
    returned agent is then the Slurm job.

    Args:
        line: the page's launch line (or its text).
        cwd: the folder it runs in (see :func:`bare_folder`).
        bare: no harness: the reader's environment and nothing else.
        hardware: device selection (:data:`HARDWARE_ENV` only).
        plugins: recorder modules from ``tests/harness`` to load in every worker
            (harness runs only).

    Raises:
        PageEnvironmentError: the environment would hold a variable the page does not show.
    """
    line = _as_line(line)
    if line.submits is not None or (SLURM is not None and SLURM.wraps):
        return _slurm().launch_nodes(line, [cwd], bare=bare, hardware=[hardware or {}], plugins=plugins)[0]
    env, job_dir = job_env(line, cwd, bare=bare, hardware=hardware, plugins=plugins)
    check_page_env(line, env, observation=not bare)
    out_path, err_path = _output_paths(cwd)
    with out_path.open("wb") as out, err_path.open("wb") as err:
        popen = subprocess.Popen(["bash", "-c", line.text], cwd=cwd, env=env, stdout=out, stderr=err,
                                 start_new_session=True)
    return Launched(popen, line, cwd, env, job_dir, out_path, err_path)


def _slurm():
    if SLURM is None:
        raise RuntimeError("this launch line submits a Slurm batch script, but the session has no Slurm cluster; "
                           "request the slurm_cluster fixture (tests/slurm_plugin.py) in the test")
    return SLURM


def finish(job: Launched, time_limit_s: float, started: float, *, hang: Hang | None = None,
           proof: HangProof | None = None) -> JobResult:
    """Wait for a launched agent within its time limit (seconds since ``started``, a
    ``time.monotonic()`` reading), stop it if it overruns, collect its output.

    With ``hang`` (where its page says the job hangs, :class:`Hang`) the job is watched
    (:func:`await_hang`) and stopped, as at its limit, once the hang is proven; with
    ``proof`` (a hang already proven by watching every node, :func:`finish_all`) it is
    stopped at once. Either way the result is ``timed_out`` with the proof in ``hang``.

    For a Slurm job, time it waited in the queue does not count (neither against the
    limit nor in ``duration_s``); one the runner cancelled at its limit through another
    node's view of it ran past its limit for this view too; and its processes get
    :data:`GRACE_S` seconds after Slurm reports its end to be gone (Slurm's own clean-up
    of a step, shared/SLURM-FACTS.md) before survivors count as left behind."""
    popen, pid_dir = job.popen, job.job_dir / "harness" if job.job_dir else None
    slurm = getattr(popen, "slurm_job_id", None) is not None
    queued = (lambda: popen.queued_s) if slurm else (lambda: 0.0)
    timed_out = False
    if proof is None and hang is not None:
        proof = await_hang([job], hang, time_limit_s, started)
    if proof is not None and popen.poll() is None:
        timed_out = True  # proven hung where the page says: what waiting longer would show
        _stop(popen, pid_dir, job.cwd)
    else:
        proof = None
        try:
            popen.wait(timeout=max(0.0, time_limit_s - (time.monotonic() - started - queued())))
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop(popen, pid_dir, job.cwd)
    if slurm and popen.stopped_by_runner:
        timed_out = True  # a multi-node job: the first node's view stopped it for all
    if slurm:
        deadline = time.monotonic() + GRACE_S
        while _job_processes(popen, pid_dir, job.cwd) and time.monotonic() < deadline:
            time.sleep(0.1)
    # A job that ended by itself must have left nothing behind; one the runner stopped
    # must have nothing left after the stop. Either way survivors are killed and reported.
    leftovers = _kill_all(popen, pid_dir, job.cwd)
    out = job.stdout_path.read_text(errors="replace") if job.stdout_path.is_file() else ""
    err = job.stderr_path.read_text(errors="replace") if job.stderr_path.is_file() else ""
    records = _read_records(pid_dir) if pid_dir else {}
    # torchrun's per-rank logs: the harness's folder, and for a batch script the folder
    # its own --log-dir names (inside the job's folder)
    log_dirs = ([job.job_dir / "logs"] if job.job_dir else []) + ([job.cwd] if getattr(popen, "submitted", False) else [])
    ranks = _read_rank_logs(*log_dirs)
    _assign_ranks(ranks, records)
    return JobResult(
        line=job.line,
        returncode=None if timed_out else popen.returncode,
        duration_s=time.monotonic() - started - queued(),
        timed_out=timed_out,
        agent_output=out + err,
        stdout_text=out,
        env=job.env,
        bare=job.job_dir is None,
        ranks=ranks,
        records=records,
        leftovers=leftovers,
        workdir=job.cwd,
        job_dir=job.job_dir,
        slurm_job_id=getattr(popen, "slurm_job_id", None),
        slurm_state=getattr(popen, "state", None),
        hang=proof,
    )


def finish_all(jobs: list[Launched], time_limit_s: float, started: float, *, hang: Hang | None = None) -> list[JobResult]:
    """:func:`finish` every node of one job, in order; with ``hang``, all nodes are
    watched together first and, once the hang is proven on all of them, each is stopped
    as at its limit (in the same order as there)."""
    proof = await_hang(jobs, hang, time_limit_s, started) if hang is not None else None
    return [finish(job, time_limit_s, started, proof=proof) for job in jobs]


def run_job(line: LaunchLine | str, cwd: Path, time_limit_s: float, *, hardware: dict[str, str] | None = None,
            plugins: tuple[str, ...] = (), hang: Hang | None = None) -> JobResult:
    """Run one launch line with the observation-only harness, to its end or its time limit.

    Args:
        line: the page's launch line, e.g. ``"torchrun --standalone --nproc-per-node=2 train.py"``.
        cwd: the folder it runs in (a :func:`bare_folder`); logs and records go to
            ``<cwd>.job`` beside it.
        time_limit_s: wall-clock limit in seconds; past it every rank's Python stack is
            dumped to its log, torchrun gets SIGTERM, and after :data:`GRACE_S` seconds
            every process of the job is SIGKILLed.
        hardware: device selection (:data:`HARDWARE_ENV` only).
        plugins: recorder modules from ``tests/harness`` to load in every worker.
        hang: where the page says the job hangs (:class:`Hang`): it is then stopped as
            soon as that is proven (see :func:`finish`).

    Returns:
        The :class:`JobResult`; use :meth:`JobResult.check` to assert success.
    """
    started = time.monotonic()
    return finish(launch(line, cwd, hardware=hardware, plugins=plugins), time_limit_s, started, hang=hang)


def run_bare(line: LaunchLine | str, cwd: Path, time_limit_s: float, *, hardware: dict[str, str] | None = None,
             hang: Hang | None = None) -> JobResult:
    """Run one launch line exactly as a reader does: no harness, the reader's environment.

    Args:
        line: the page's launch line.
        cwd: a :func:`bare_folder` holding only the program and its local imports.
        time_limit_s: wall-clock limit in seconds; past it torchrun gets SIGTERM and,
            after :data:`GRACE_S` seconds, every process of the job is SIGKILLed.
        hardware: device selection (:data:`HARDWARE_ENV` only).
        hang: where the page says the job hangs (:class:`Hang`): it is then stopped as
            soon as that is proven (see :func:`finish`).

    Returns:
        The :class:`JobResult` (``bare=True``, no ranks or records); the combined
        output of torchrun and its workers is in ``stdout_text``/``agent_output``.
    """
    started = time.monotonic()
    return finish(launch(line, cwd, bare=True, hardware=hardware), time_limit_s, started, hang=hang)


def run_nodes(line: LaunchLine | str, cwds: list[Path], time_limit_s: float, *, bare: bool = False,
              hardware: list[dict[str, str]] | None = None, plugins: tuple[str, ...] = (),
              hang: Hang | None = None) -> list[JobResult]:
    """Run the same launch line on several "nodes" of this machine at once, one agent per
    folder (as a reader types the line in one terminal per node), within one time limit.

    Args:
        line: the page's launch line (with ``--nnodes=N``).
        cwds: one folder per node, each its own copy of the program.
        time_limit_s: wall-clock limit for the whole multi-node job, in seconds.
        bare: run without the harness (see :func:`run_bare`).
        hardware: device selection per node (:data:`HARDWARE_ENV` only).
        plugins: recorder modules (harness runs only).
        hang: where the page says the job hangs (:class:`Hang`, ``world_size`` of all
            nodes): every node is stopped as soon as that is proven on all of them.

    Returns:
        One :class:`JobResult` per node, in the order of ``cwds``; the records of each
        hold only that node's global ranks.
    """
    started = time.monotonic()
    hardware = hardware or [{} for _ in cwds]
    line = _as_line(line)
    if SLURM is not None and SLURM.wraps and line.submits is None:
        jobs = SLURM.launch_nodes(line, cwds, bare=bare, hardware=hardware, plugins=plugins)  # one job, a node per folder
    else:
        jobs = [launch(line, cwd, bare=bare, hardware=hw, plugins=plugins) for cwd, hw in zip(cwds, hardware, strict=True)]
    return finish_all(jobs, time_limit_s, started, hang=hang)


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
