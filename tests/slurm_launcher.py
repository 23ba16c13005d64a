"""The runner's Slurm backend: launch lines as Slurm jobs, followed like local agents.

Two uses, both through ``torchjob.launch``/``run_nodes`` when ``torchjob.SLURM`` is a
:class:`SlurmBackend`:

* **A page's own batch script** (a launch line ``sbatch [options] script.sbatch``): the
  line runs with ``bash -c`` in the program's folder exactly as the reader types it, in
  the reader's environment plus the cluster's ``SLURM_CONF``; the job it submits is then
  followed by polling ``scontrol show job -o`` to its end, or cancelled (``scancel``) at
  the program's time limit. The job's own output file is the agent's stdout; torchrun's
  per-rank logs are wherever the script's ``--log-dir`` puts them in the folder.
* **Any other launch line, wrapped** (``--slurm-partition``: the suite on a cluster):
  one job per launch with one node per terminal the local runner would open
  (``--nodes``), GPUs per node when the program runs on CUDA, and one task per node
  that ``cd``s into that node's folder and runs the line with ``bash -c``, writing the
  same stdout/stderr files a local agent writes. For a multi-node line, the variables
  the line reads for its rendezvous (``--rdzv-endpoint=${HEAD_ADDR:-…}:${HEAD_PORT:-…}``,
  ``--rdzv-id=${JOB_ID:-…}``) are set the way the lesson's batch script sets them: the
  first node's ``NodeAddr``, a port from the job id, the job id.

Either way a job gets what its page sets (and the observation variables of a harness
run), the cluster's ``SLURM_CONF``, and what Slurm itself puts in every job's
environment (``SLURM_*``; ``CUDA_VISIBLE_DEVICES`` for the GPUs it allocated), as a
reader's job does.
"""
from __future__ import annotations

import re
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from coursekit.runspec import LaunchLine
from slurm_cluster import Cluster, SlurmError
from torchjob import Launched, _output_paths, check_page_env, job_env

__all__ = ["SlurmBackend", "SlurmJob"]

SUBMIT_TIMEOUT_S = 60.0
_SUBMITTED = re.compile(r"Submitted batch job (?P<id>\d+)|^(?P<parsable>\d+)(?:;\S+)?$", re.M)
_VAR = re.compile(r"\$\{?(?P<name>[A-Za-z_]\w*)")
# where sbatch's batch step finds the first node's address: node names need not
# resolve (shared/SLURM-FACTS.md), the controller's NodeAddr does
_HEAD_ADDR = ('head_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)\n'
              'head_addr=$(scontrol show node "$head_node" | grep -o "NodeAddr=[^ ]*" | cut -d= -f2)\n')


@dataclass
class SlurmJob:
    """A submitted Slurm job (or one node's view of it), with the part of
    ``subprocess.Popen``'s interface the runner uses: ``poll``, ``wait``, ``returncode``,
    ``send_signal``, ``kill`` and ``pid`` (None: there is no local parent to follow).

    Attributes:
        cluster: where it runs.
        slurm_job_id: its id (None if sbatch refused it; ``returncode`` says how).
        submitted_at: ``time.monotonic()`` when sbatch returned.
        own_logs: the page's own batch script (its logs are in the job's folder).
        rc_file: for one node of a wrapped job, the file its task writes the agent's
            exit status to; the node's ``returncode`` is that status.
        state: the job's final state once seen (``COMPLETED``, ``FAILED``...).
    """

    cluster: Cluster
    slurm_job_id: int | None
    submitted_at: float
    own_logs: bool = False
    rc_file: Path | None = None
    state: str | None = None
    returncode: int | None = None
    pid: None = None
    final: dict = field(default_factory=dict)
    _seen_pending: bool = False  # some poll of this view saw it pending

    @property
    def stopped_by_runner(self) -> bool:
        """The runner cancelled this job (through any node's view of it, see
        :meth:`send_signal`): for every view it ran past its time limit."""
        return self.slurm_job_id in self.cluster.stopped

    @property
    def queued_s(self) -> float:
        """Seconds it has waited in the queue: from submission to first seen running, or
        to now while no poll has seen it past pending (0 if sbatch refused it). Time that
        does not count against a program's time limit. (A job the controller no longer
        knows counts as waiting too; :meth:`wait` then raises SlurmError.)"""
        if self.slurm_job_id is None:
            return 0.0
        self.poll()
        queued = self.cluster.timing(self.slurm_job_id).queued_s
        return time.monotonic() - self.submitted_at if queued is None else queued

    @property
    def submitted(self) -> bool:
        """A batch script the page itself submits (see ``torchjob.finish``)."""
        return self.own_logs

    def _settle(self, st) -> int | None:
        if st is None or not st.done:
            return None
        self.state, self.final = st.state, st.fields
        code = st.exit_code if st.signal == 0 else -st.signal
        if st.state != "COMPLETED" and code == 0:
            code = -15 if st.state in ("CANCELLED", "TIMEOUT") else 1  # ended, but not by its own success
        if self.rc_file is not None and self.rc_file.is_file():
            text = self.rc_file.read_text().strip()
            code = int(text) if text.lstrip("-").isdigit() else code
        self.returncode = code
        return code

    def poll(self) -> int | None:
        """The exit status once the job has ended, else None."""
        if self.returncode is not None or self.slurm_job_id is None:
            return self.returncode
        st = self.cluster.job(self.slurm_job_id)
        self._seen_pending = self.cluster.observe(self.slurm_job_id, st, self.submitted_at, self._seen_pending)
        return self._settle(st)

    def wait(self, timeout: float | None = None) -> int:
        """Wait until the job ends; ``timeout`` counts running time only (queue excluded).

        Raises:
            subprocess.TimeoutExpired: it still runs after ``timeout`` seconds.
        """
        if self.poll() is not None:
            return self.returncode
        limit = 600.0 if timeout is None else timeout
        st = self.cluster.wait(self.slurm_job_id, limit, submitted=self.submitted_at, seen_pending=self._seen_pending)
        if self._settle(st) is None:
            raise subprocess.TimeoutExpired(f"slurm job {self.slurm_job_id}", limit)
        return self.returncode

    def send_signal(self, sig) -> None:
        """Any stop signal cancels the job (``scancel``): Slurm signals every process of it.
        The job is then :attr:`stopped_by_runner` for all its views."""
        if self.slurm_job_id is not None:
            self.cluster.stopped.add(self.slurm_job_id)
            self.cluster.cancel(self.slurm_job_id)

    def kill(self) -> None:
        self.send_signal(None)


def _rendezvous_variables(line: LaunchLine) -> dict[str, str]:
    """The variables a torchrun line reads for its rendezvous: ``{"host": NAME, "port":
    NAME, "id": NAME}``, each only where the line uses a variable there."""
    found: dict[str, str] = {}
    for word in line.argv:
        key, _, value = word.partition("=")
        if key in ("--rdzv-endpoint", "--rdzv_endpoint"):
            host, _, port = value.rpartition(":")
            for role, part in (("host", host), ("port", port)):
                m = _VAR.search(part)
                if m:
                    found[role] = m["name"]
        elif key in ("--rdzv-id", "--rdzv_id") and (m := _VAR.search(value)):
            found["id"] = m["name"]
    return found


def _exports(env: dict[str, str]) -> str:
    return "".join(f"export {name}={shlex.quote(value)}\n" for name, value in env.items())


class SlurmBackend:
    """Submit launch lines to a Slurm cluster (see the module docstring).

    Args:
        cluster: the cluster (its client environment and partition).
        wraps: True to run every launch line as a Slurm job (the suite on a cluster);
            False to submit only the lines that are ``sbatch`` commands themselves.
    """

    def __init__(self, cluster: Cluster, wraps: bool = False) -> None:
        self.cluster = cluster
        self.wraps = wraps
        self._gpus: int | None = None
        self.launched: list[SlurmJob] = []  # every node's view of every job submitted

    def cancel_unfinished(self) -> list[int]:
        """Cancel every job submitted through this backend that still runs, then forget
        them all. Called after each test (``slurm_plugin``): every test and fixture of
        the suite follows its jobs to their end with ``torchjob.finish`` before it
        returns, so a job still running here was left by a test that failed in between,
        and would otherwise hold a node until Slurm's own time limit. (A fixture that
        handed a running job to later tests would lose it here.)

        Returns:
            The ids of the jobs cancelled (empty when every job was followed to its end).
        """
        cancelled = []
        for job in self.launched:
            if job.slurm_job_id is None or job.returncode is not None or job.slurm_job_id in cancelled:
                continue
            state = self.cluster.job(job.slurm_job_id)
            if state is not None and not state.done:
                job.send_signal(None)
                cancelled.append(job.slurm_job_id)
        self.launched.clear()
        return cancelled

    @property
    def gpus_per_node(self) -> int:
        """GPUs per node of the cluster's partition (asked once)."""
        if self._gpus is None:
            self._gpus = self.cluster.gpus_per_node()
        return self._gpus

    def launch_nodes(self, line: LaunchLine, cwds: list[Path], *, bare: bool, hardware: list[dict[str, str]],
                     plugins: tuple[str, ...]) -> list[Launched]:
        """Submit one job for a launch run in ``cwds`` (one folder per node); returns one
        :class:`~torchjob.Launched` per folder, each a view of the same job.

        Raises:
            torchjob.PageEnvironmentError: an environment holds a variable its page does not show.
        """
        if line.submits is not None:
            (cwd,) = cwds  # the reader submits the script once, from one folder
            return [self._submit_own(line, cwd, bare=bare, hardware=hardware[0], plugins=plugins)]
        return self._submit_wrapped(line, cwds, bare=bare, hardware=hardware, plugins=plugins)

    def _submit_own(self, line: LaunchLine, cwd: Path, *, bare: bool, hardware: dict[str, str],
                    plugins: tuple[str, ...]) -> Launched:
        env, job_dir = job_env(line, cwd, bare=bare, hardware=hardware, plugins=plugins)
        env.update(self.cluster.env)  # as a site's users have it: where the cluster's slurm.conf is
        check_page_env(line, env, observation=not bare, cluster=True)
        submit_log = cwd.parent / f"{cwd.name}.submit"
        with submit_log.open("wb") as out:
            proc = subprocess.run(["bash", "-c", line.text], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  timeout=SUBMIT_TIMEOUT_S)
        submitted = time.monotonic()
        m = _SUBMITTED.search(submit_log.read_text(errors="replace"))
        job = SlurmJob(self.cluster, int(m["id"] or m["parsable"]) if m and proc.returncode == 0 else None,
                       submitted, own_logs=True)
        stdout_path = stderr_path = submit_log
        if job.slurm_job_id is None:
            job.returncode = proc.returncode or 1  # sbatch refused the job: its message is the output
        else:
            state = self.cluster.job(job.slurm_job_id)
            if state is not None and state.fields.get("StdOut"):
                stdout_path = Path(state.fields["StdOut"])
                if state.fields.get("StdErr") not in (None, "", state.fields["StdOut"]):
                    stderr_path = Path(state.fields["StdErr"])
        self.launched.append(job)
        return Launched(job, line, cwd, env, job_dir, stdout_path, stderr_path)

    def _submit_wrapped(self, line: LaunchLine, cwds: list[Path], *, bare: bool, hardware: list[dict[str, str]],
                        plugins: tuple[str, ...]) -> list[Launched]:
        from coursekit.runspec import torchrun_shape

        folder = cwds[0].parent / f"{cwds[0].name}.slurm"
        folder.mkdir(parents=True, exist_ok=True)
        nproc, _ = torchrun_shape(line.argv)
        rendezvous = _rendezvous_variables(line) if len(cwds) > 1 else {}
        envs, dirs, nodes = [], [], []
        for k, (cwd, hw) in enumerate(zip(cwds, hardware, strict=True)):
            env, job_dir = job_env(line, cwd, bare=bare, hardware=hw, plugins=plugins)
            env.update(self.cluster.env)
            set_by_job = {name: "" for name in rendezvous.values()}
            check_page_env(line, {**env, **set_by_job}, observation=not bare, cluster=True)
            out_path, err_path = _output_paths(cwd)
            rc_file = cwd.parent / f"{cwd.name}.rc"
            per_node = {name: value for name, value in env.items() if name not in ("PATH", *self.cluster.env)}
            (folder / f"node{k}.sh").write_text(
                "#!/bin/bash\n"
                f"# Node {k} of the job: the launch line as a reader types it in terminal {k}, in its own folder.\n"
                f"cd {shlex.quote(str(cwd))} || exit 97\n"
                + _exports(per_node)
                + f"bash -c {shlex.quote(line.text)} >{shlex.quote(str(out_path))} 2>{shlex.quote(str(err_path))}\n"
                "rc=$?\n"
                f"echo $rc >{shlex.quote(str(rc_file))}\n"
                "exit $rc\n", encoding="utf-8")
            envs.append(env)
            dirs.append(job_dir)
            nodes.append((cwd, out_path, err_path, rc_file))
        cuda = not any(hw.get("CUDA_VISIBLE_DEVICES") == "" for hw in hardware) and self.gpus_per_node > 0
        limit_min = 30  # Slurm's own backstop; the runner cancels at the program's limit
        header = [
            "#!/bin/bash",
            f"#SBATCH --job-name=course-{cwds[0].name}",
            f"#SBATCH --nodes={len(cwds)}",
            "#SBATCH --ntasks-per-node=1",
            f"#SBATCH --cpus-per-task={nproc}",
            f"#SBATCH --time={limit_min}",
            f"#SBATCH --output={folder}/job-%j.out",
            f"#SBATCH --chdir={folder}",
        ]
        if self.cluster.partition:
            header.append(f"#SBATCH --partition={self.cluster.partition}")
        if cuda:
            header.append(f"#SBATCH --gpus-per-node={min(nproc, self.gpus_per_node)}")
        body = ""
        if rendezvous:
            body += _HEAD_ADDR
            body += "".join(f"export {rendezvous[role]}={value}\n" for role, value in
                            (("host", "$head_addr"), ("port", "$((20000 + SLURM_JOB_ID % 10000))"), ("id", "$SLURM_JOB_ID"))
                            if role in rendezvous)
        body += f"srun --kill-on-bad-exit=1 bash -c 'exec bash {shlex.quote(str(folder))}/node${{SLURM_NODEID}}.sh'\n"
        script = folder / "job.sbatch"
        script.write_text("\n".join(header) + "\n" + body, encoding="utf-8")
        # sbatch exports its environment into the job: the reader's PATH and the cluster's
        # SLURM_CONF; each node's script adds what differs per node (observation, devices)
        submit_env = {"PATH": envs[0]["PATH"], **self.cluster.env}
        proc = subprocess.run(["sbatch", "--parsable", str(script)], env=submit_env, capture_output=True, text=True,
                              timeout=SUBMIT_TIMEOUT_S)
        submitted = time.monotonic()
        m = _SUBMITTED.search(proc.stdout)
        if proc.returncode != 0 or not m:
            raise SlurmError(f"sbatch {script} exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()}")
        job_id = int(m["id"] or m["parsable"])
        views = [SlurmJob(self.cluster, job_id, submitted, rc_file=rc) for _, _, _, rc in nodes]
        self.launched += views
        return [Launched(view, line, cwd, env, job_dir, out, err)
                for view, (cwd, out, err, _), env, job_dir in zip(views, nodes, envs, dirs)]
