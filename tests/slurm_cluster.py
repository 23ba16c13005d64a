"""Slurm for the tests: the client side of any cluster, and a real two-node cluster on
this machine that a test session starts and stops.

* :class:`Cluster` -- what ``sbatch``, ``scontrol``, ``scancel`` and ``sinfo`` reach: a
  maintainer's cluster (its configuration where the site keeps it, usually
  ``/etc/slurm/slurm.conf``), or the local one below. Jobs are followed by polling
  ``scontrol show job -o`` (``sbatch --wait`` returns only at coarse steps, seen at 10 and
  42 s for 3-5 s jobs), and every job's submit-to-start and start-to-end times are kept
  (:attr:`Cluster.timings`) so the tests can report Slurm's overhead.
* :class:`LocalCluster` -- Debian's Slurm 22.05 and munge on this machine: a munge key
  and daemon, ``slurmctld`` and one ``slurmd -N nK`` per node, every file (configuration,
  state, spool, logs, sockets) under one folder; :meth:`LocalCluster.stop` cancels what
  is left, stops the daemons in order and proves no process of the cluster is left.

The measured facts behind the configuration are in ``shared/SLURM-FACTS.md``: several
``slurmd`` on one host (``MULTIPLE_SLURMD``, each with its own ``Port=``),
``proctrack/linuxproc`` and ``task/none`` (no cgroups here), ``MinJobAge`` so finished
jobs stay visible to ``scontrol``, ``ReturnToService=2``, and node names that do not
resolve (each node's ``NodeAddr`` is 127.0.0.1). The install step is
``tests/system-deps.sh`` (``make test`` and CI run it).
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from coursekit.net import free_port

__all__ = ["Cluster", "JobState", "JobTiming", "LocalCluster", "SlurmError", "TERMINAL_STATES", "queued_since",
           "slurm_queue_s", "unavailable"]

# The Debian packages and the commands of theirs the tests run (tests/system-deps.sh installs them).
TOOLS = {"munged": "munge", "mungekey": "munge", "slurmctld": "slurmctld", "slurmd": "slurmd",
         "sbatch": "slurm-client", "srun": "slurm-client", "scontrol": "slurm-client",
         "scancel": "slurm-client", "sinfo": "slurm-client"}
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Slurm's job states in which a job will not run any more (squeue(1), "JOB STATE CODES").
TERMINAL_STATES = frozenset({"BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL",
                             "OUT_OF_MEMORY", "PREEMPTED", "REVOKED", "SPECIAL_EXIT", "TIMEOUT"})
POLL_S = 0.2
START_TIMEOUT_S = 60.0
# CPUs each local node declares, at least: the course's largest launch asks for 4 processes
# on one node (mesh_2d.py), and jobs of parallel test workers must run side by side (two
# jobs started "at once" must really be at once). The nodes share this machine's CPUs
# anyway; how many jobs run at a time is set by the test workers, not by Slurm.
LOCAL_NODE_CPUS = 8
STOP_TIMEOUT_S = 30.0
_FIELD = re.compile(r"(?:^|\s)(?P<key>[A-Za-z][A-Za-z0-9_:/]*)=(?P<value>\S*)")


class SlurmError(RuntimeError):
    """A Slurm command or daemon failed; the message names the command and its output."""


def _which(tool: str) -> str | None:
    return shutil.which(tool, path=f"{os.environ.get('PATH', '')}:{SYSTEM_PATH}")


def unavailable() -> str | None:
    """Why this machine cannot run the local test cluster, as a skip reason in the style
    ``Requires: [slurmctld + munge] (why)``; None when it can."""
    missing = sorted({pkg for tool, pkg in TOOLS.items() if _which(tool) is None})
    if missing:
        return (f"Requires: [slurmctld + munge] (not installed: {', '.join(missing)}; "
                f"install with: sudo apt-get install --no-install-recommends {' '.join(missing)}, or run tests/system-deps.sh)")
    if os.geteuid() != 0:
        return "Requires: [slurmctld + munge] (slurmd must run as root to start jobs; run the tests as root)"
    return None


@dataclass(frozen=True)
class JobState:
    """One reading of ``scontrol show job -o JOBID``.

    Attributes:
        job_id: the job id.
        state: ``JobState`` (``PENDING``, ``RUNNING``, ``COMPLETED``, ``FAILED``, ...).
        exit_code: the batch script's exit status (first half of ``ExitCode=N:S``).
        signal: the signal that ended it (second half), 0 for none.
        fields: every ``Key=Value`` of the line (``NodeList``, ``StdOut``, ``Reason``...).
    """

    job_id: int
    state: str
    exit_code: int
    signal: int
    fields: dict[str, str]

    @property
    def done(self) -> bool:
        """The job will not run any more."""
        return self.state in TERMINAL_STATES


@dataclass
class JobTiming:
    """What one job cost beyond its own work, in seconds (``time.monotonic`` differences,
    each as close as a :data:`POLL_S` poll can see it).

    Attributes:
        job_id: the job.
        queued_s: from ``sbatch`` returning to the job first seen running (scheduling).
        run_s: from first seen running to first seen in a final state.
        state: the final state.
    """

    job_id: int
    queued_s: float | None = None
    run_s: float | None = None
    state: str = ""


def slurm_queue_s(state: JobState) -> float | None:
    """Seconds a job waited to start by Slurm's own clock (``StartTime`` minus
    ``SubmitTime``, whole seconds, scontrol's ``YYYY-MM-DDTHH:MM:SS``); None when either
    is missing (``Unknown``, or a job not started yet)."""
    from datetime import datetime

    try:
        start, submit = (datetime.fromisoformat(state.fields[key]) for key in ("StartTime", "SubmitTime"))
    except (KeyError, ValueError):
        return None
    return max(0.0, (start - submit).total_seconds())


def queued_since(state: JobState, submitted: float, now: float, seen_pending: bool) -> float:
    """A job's queue time, first seen not pending at ``now``: the poller's own reading
    (``now - submitted``, :data:`POLL_S` precision) where it saw the job pending before,
    else Slurm's (:func:`slurm_queue_s`), since ``now - submitted`` would then include
    however long the job already ran unwatched."""
    if seen_pending:
        return now - submitted
    slurm = slurm_queue_s(state)
    return slurm if slurm is not None else now - submitted


def parse_job(line: str) -> JobState:
    """Parse one ``scontrol show job -o`` line.

    Raises:
        SlurmError: the line has no ``JobId`` or ``JobState``.
    """
    fields = {m["key"]: m["value"] for m in _FIELD.finditer(line)}
    if "JobId" not in fields or "JobState" not in fields:
        raise SlurmError(f"scontrol printed no job state: {line.strip()!r}")
    code, _, sig = fields.get("ExitCode", "0:0").partition(":")
    return JobState(int(fields["JobId"]), fields["JobState"], int(code or 0), int(sig or 0), fields)


class Cluster:
    """The client side of a Slurm cluster.

    Args:
        env: the variables Slurm's client commands need to find the cluster: ``{}`` for a
            site whose configuration is at the default path, ``{"SLURM_CONF": path}``
            otherwise (as the local cluster's is). Jobs get them too (sbatch exports the
            submitting environment), which is how ``srun`` and ``scontrol`` inside a batch
            script find the same cluster.
        partition: the partition jobs go to, or None for the cluster's default.
    """

    def __init__(self, env: dict[str, str] | None = None, partition: str | None = None) -> None:
        self.env = dict(env or {})
        self.partition = partition
        self.timings: list[JobTiming] = []
        self.startup_s: float | None = None
        self.stopped: set[int] = set()  # jobs the runner cancelled (SlurmJob.send_signal)

    def command_env(self) -> dict[str, str]:
        """The environment the client commands run with: ``PATH`` and :attr:`env`."""
        return {"PATH": SYSTEM_PATH, **self.env}

    def run(self, *argv: str, check: bool = True, timeout: float = 30.0) -> subprocess.CompletedProcess:
        """Run one Slurm client command; returns its completed process.

        Raises:
            SlurmError: it exited non-zero (with ``check``), naming command and output.
        """
        proc = subprocess.run(list(argv), env=self.command_env(), capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise SlurmError(f"{' '.join(argv)} exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()}")
        return proc

    def job(self, job_id: int) -> JobState | None:
        """The job's state now; None once Slurm has forgotten it (``MinJobAge`` passed)."""
        proc = self.run("scontrol", "show", "job", "-o", str(job_id), check=False)
        if proc.returncode != 0 or "JobId=" not in proc.stdout:
            return None
        return parse_job(proc.stdout.splitlines()[0])

    def timing(self, job_id: int) -> JobTiming:
        """The :class:`JobTiming` of a job this client submitted or follows."""
        for t in self.timings:
            if t.job_id == job_id:
                return t
        t = JobTiming(job_id)
        self.timings.append(t)
        return t

    def observe(self, job_id: int, state: JobState | None, submitted: float, seen_pending: bool,
                now: float | None = None) -> bool:
        """Take one poll's view of a job: the first poll to see it past pending records
        its queue time (:func:`queued_since`) in its :class:`JobTiming`, for every view
        of the job (several nodes' views of one job may poll it).

        Args:
            job_id: the job.
            state: what this poll read (None: the controller does not know the job).
            submitted: ``time.monotonic()`` when sbatch returned.
            seen_pending: whether an earlier poll of this view saw it pending.
            now: ``time.monotonic()`` when this poll read ``state`` (default: now).

        Returns:
            Whether this poll or an earlier one of this view saw it pending.
        """
        if state is None:
            return seen_pending
        if state.state == "PENDING":
            return True
        timing = self.timing(job_id)
        if timing.queued_s is None:
            timing.queued_s = queued_since(state, submitted, time.monotonic() if now is None else now, seen_pending)
        return seen_pending

    def wait(self, job_id: int, run_timeout_s: float, submitted: float | None = None,
             queue_timeout_s: float = 3600.0, seen_pending: bool = False) -> JobState | None:
        """Poll a job until it ends, or until it has run ``run_timeout_s`` seconds.

        Time spent pending in the queue does not count against ``run_timeout_s`` (a
        shared cluster may keep a job waiting), but at most ``queue_timeout_s``.

        Args:
            job_id: the job.
            run_timeout_s: seconds it may run.
            submitted: ``time.monotonic()`` when sbatch returned (for the queue time).
            queue_timeout_s: seconds it may wait to start.
            seen_pending: whether the caller's own polls already saw it pending.

        Returns:
            The final :class:`JobState`, or the last one seen (not ``done``) on a timeout.

        Raises:
            SlurmError: the job is unknown to the controller.
        """
        timing = self.timing(job_id)
        submitted = time.monotonic() if submitted is None else submitted
        running_since = None
        while True:
            state = self.job(job_id)
            now = time.monotonic()
            if state is None:
                raise SlurmError(f"job {job_id} is unknown to the Slurm controller (scontrol show job -o {job_id})")
            seen_pending = self.observe(job_id, state, submitted, seen_pending, now)
            if state.state != "PENDING" and running_since is None:
                running_since = now
            if state.done:
                if not timing.state:  # the first to see it end (several nodes' views may ask)
                    timing.run_s = now - (running_since or now)
                    timing.state = state.state
                return state
            if running_since is None and now - submitted > queue_timeout_s:
                return state
            if running_since is not None and now - running_since > run_timeout_s:
                return state
            time.sleep(POLL_S)

    def cancel(self, job_id: int, signal_name: str | None = None) -> None:
        """``scancel`` a job (or send it a signal, e.g. ``"TERM"``)."""
        argv = ["scancel", *((f"--signal={signal_name}", "--full") if signal_name else ()), str(job_id)]
        self.run(*argv, check=False)

    def gpus_per_node(self) -> int:
        """The fewest GPUs (``gres/gpu``) a node of :attr:`partition` has (0 without GPUs),
        from ``sinfo -o %G`` (e.g. ``gpu:4``, ``gpu:a100:8(S:0-1)``, ``(null)``)."""
        argv = ["sinfo", "-h", "-o", "%G"] + (["-p", self.partition] if self.partition else [])
        counts = []
        for line in self.run(*argv).stdout.split():
            per = [int(m.group(1)) for m in re.finditer(r"gpu(?::[^:,(]+)?:(\d+)", line)]
            counts.append(sum(per))
        return min(counts) if counts else 0

    def node_states(self) -> dict[str, str]:
        """``{node name: state}`` (``idle``, ``alloc``, ``down``...) from ``sinfo -N``."""
        argv = ["sinfo", "-h", "-N", "-o", "%N %t"] + (["-p", self.partition] if self.partition else [])
        out = self.run(*argv).stdout
        return dict(line.split(None, 1) for line in out.splitlines() if line.strip())


@dataclass
class _Daemon:
    name: str
    popen: subprocess.Popen
    log: Path


class LocalCluster(Cluster):
    """A real Slurm cluster of ``nodes`` nodes on this machine, every file under ``folder``.

    Use :meth:`start` (returns self once ``sinfo`` shows every node idle) and :meth:`stop`.
    Node ``nK`` listens on its own port and is reached at 127.0.0.1; the partition is
    ``course``. Each node declares this machine's CPUs, at least :data:`LOCAL_NODE_CPUS`
    (jobs on the two nodes share them), and no GPU. The client commands find it through
    ``SLURM_CONF`` (its ``slurm.conf``), as a site's commands find theirs through
    ``/etc/slurm/slurm.conf``.
    """

    def __init__(self, folder: Path, nodes: int = 2, partition: str = "course") -> None:
        super().__init__({"SLURM_CONF": str(folder / "slurm.conf")}, partition)
        self.folder = folder
        self.nodes = nodes
        self.daemons: list[_Daemon] = []

    @property
    def conf(self) -> Path:
        return self.folder / "slurm.conf"

    @property
    def node_names(self) -> list[str]:
        return [f"n{i + 1}" for i in range(self.nodes)]

    def _write_conf(self) -> None:
        f = self.folder
        host = socket.gethostname()
        cpus = max(os.cpu_count() or 1, LOCAL_NODE_CPUS)  # slurmd takes them as given (config_overrides)
        lines = [
            "# Written by tests/slurm_cluster.py for one test session; see shared/SLURM-FACTS.md.",
            "ClusterName=course",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={f}/munge/munge.socket.2",
            f"StateSaveLocation={f}/state",
            f"SlurmdSpoolDir={f}/spool/%n",
            f"SlurmctldPidFile={f}/run/slurmctld.pid",
            f"SlurmdPidFile={f}/run/slurmd-%n.pid",
            f"SlurmctldLogFile={f}/log/slurmctld.log",
            f"SlurmdLogFile={f}/log/slurmd-%n.log",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "MpiDefault=none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "SchedulerType=sched/backfill",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/filetxt",
            f"JobCompLoc={f}/log/jobcomp.txt",
            "MinJobAge=600",
            "ReturnToService=2",
            "SlurmdParameters=config_overrides",
            "KillWait=5",
        ]
        for name in self.node_names:
            lines.append(f"NodeName={name} NodeHostname={host} NodeAddr=127.0.0.1 Port={free_port()} CPUs={cpus} State=UNKNOWN")
        lines.append(f"PartitionName={self.partition} Nodes={','.join(self.node_names)} Default=YES MaxTime=INFINITE State=UP")
        self.conf.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = self.folder / "log" / f"{name}.out"
        with log.open("wb") as out:
            # SLURM_CONF in the daemons' environment too: every process they start (slurmstepd,
            # the jobs) carries it, which is how stop() finds anything left of this cluster.
            popen = subprocess.Popen(argv, env=self.command_env(), stdout=out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        self.daemons.append(_Daemon(name, popen, log))

    def start(self) -> "LocalCluster":
        """Create the key and configuration, start munged, slurmctld and every slurmd, and
        wait until every node is idle.

        Raises:
            SlurmError: a daemon exited or the nodes did not become idle within
                :data:`START_TIMEOUT_S` seconds; the message holds the daemons' logs' tails.
                The daemons already started are stopped first.
        """
        started = time.monotonic()
        if self.folder.exists():
            shutil.rmtree(self.folder)  # a clean controller state: job ids start at 1
        for sub in ("state", "spool", "run", "log"):
            (self.folder / sub).mkdir(parents=True)
        munge = self.folder / "munge"
        munge.mkdir()
        for path in (self.folder, munge):  # munged refuses a socket whose folders others cannot enter
            os.chmod(path, 0o755)
        subprocess.run([_which("mungekey"), "-c", "-k", str(munge / "munge.key")], check=True, capture_output=True)
        self._write_conf()
        try:
            self._spawn("munged", [_which("munged"), "-F", f"--socket={munge}/munge.socket.2",
                                   f"--key-file={munge}/munge.key", f"--log-file={munge}/munged.log",
                                   f"--pid-file={munge}/munged.pid", f"--seed-file={munge}/munge.seed"])
            self._wait_for(lambda: (munge / "munge.socket.2").exists(), "munged's socket")
            self._spawn("slurmctld", [_which("slurmctld"), "-D", "-i", "-f", str(self.conf)])
            for name in self.node_names:
                self._spawn(f"slurmd-{name}", [_which("slurmd"), "-D", "-N", name, "-f", str(self.conf)])
            self._wait_for(self._all_idle, "every node idle in sinfo")
        except BaseException:
            self.stop(check=False)
            raise
        self.startup_s = time.monotonic() - started
        return self

    def _all_idle(self) -> bool:
        try:
            states = self.node_states()
        except (SlurmError, subprocess.TimeoutExpired):
            return False
        return sorted(states) == self.node_names and all(s == "idle" for s in states.values())

    def _wait_for(self, ready, what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready():
            dead = [d for d in self.daemons if d.popen.poll() is not None]
            if dead or time.monotonic() > deadline:
                why = f"{dead[0].name} exited {dead[0].popen.returncode}" if dead else f"not ready after {START_TIMEOUT_S:.0f} s"
                raise SlurmError(f"local Slurm cluster in {self.folder}: waiting for {what}: {why}\n{self.logs()}")
            time.sleep(POLL_S)

    def logs(self, lines: int = 15) -> str:
        """The tails of the daemons' logs, for error messages."""
        parts = []
        for path in sorted((self.folder / "log").glob("*")) + [self.folder / "munge" / "munged.log"]:
            if path.is_file():
                tail = path.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"=== {path.name} ===\n" + "\n".join(tail))
        return "\n".join(parts)

    def processes(self) -> list[psutil.Process]:
        """Every live process of this cluster: the daemons and everything they started
        (found by ``SLURM_CONF`` in the environment, which slurmstepd and jobs inherit)."""
        conf, found = str(self.conf), []
        for proc in psutil.process_iter():
            try:
                if proc.status() == psutil.STATUS_ZOMBIE:
                    continue  # exited, waiting to be reaped; holds nothing
                if proc.environ().get("SLURM_CONF") == conf:
                    found.append(proc)
            except psutil.Error:
                continue
        return found

    def stop(self, check: bool = True) -> list[int]:
        """Cancel every job still there, stop each slurmd, then slurmctld, then munged
        (SIGTERM, waiting for each), and check that no process of the cluster is left.

        Returns:
            The pids found alive after the stop (then killed); empty when clean.

        Raises:
            SlurmError: with ``check``, something was left running.
        """
        ctld = next((d for d in self.daemons if d.name == "slurmctld"), None)
        if ctld is not None and ctld.popen.poll() is None:
            self.run("scancel", "--full", f"--partition={self.partition}", "--user=root", check=False)
            deadline = time.monotonic() + STOP_TIMEOUT_S
            while time.monotonic() < deadline:
                out = self.run("scontrol", "show", "job", "-o", check=False).stdout
                if not any(not parse_job(l).done for l in out.splitlines() if "JobId=" in l):
                    break
                time.sleep(POLL_S)
        order = ([d for d in self.daemons if d.name.startswith("slurmd")]
                 + [d for d in self.daemons if d.name == "slurmctld"] + [d for d in self.daemons if d.name == "munged"])
        for daemon in order:
            if daemon.popen.poll() is None:
                daemon.popen.send_signal(signal.SIGTERM)
                try:
                    daemon.popen.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    daemon.popen.kill()
                    daemon.popen.wait()
        self.daemons.clear()
        left = self.processes()
        for proc in left:
            try:
                proc.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(left, timeout=5)
        pids = [p.pid for p in left]
        if check and pids:
            raise SlurmError(f"local Slurm cluster in {self.folder}: processes left after the stop (killed): {pids}")
        return pids
