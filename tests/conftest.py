"""Shared fixtures: the project's paths and running snippet programs as torchrun jobs."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import textwrap
from pathlib import Path
from types import ModuleType

import pytest


ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"


def _languages() -> tuple[str, ...]:
    from coursekit.languages import published_languages
    from po_i18n.project import Project

    return published_languages(Project.load(ROOT / "mkdocs.yml"))


# The languages a build publishes, the default first: mkdocs.yml's i18n languages without those
# carried unpublished (build: false), which tests of the built site skip. Every test that
# depends on the set of languages reads it from here, so a language added to mkdocs.yml
# (course add-language) is tested with the others.
LANGUAGES = _languages()
TRANSLATIONS = LANGUAGES[1:]  # the published translation languages

pytest_plugins = ["verification_plugin", "slurm_plugin"]

# The po-i18n plugin's verdicts (its cache_dir, .cache/plugin/po-i18n) shared by every
# scratch copy of a site in one test session, xdist workers included: a copy's build judges
# only what its planted change adds, as a maintainer's second build does, instead of every
# translation of every language again (about half of each build's time). A verdict's key
# holds everything it depends on (po_i18n.verdicts; paths count from the copy's folder),
# and hooks/mkdocs-po-i18n/tests/test_verdicts.py proves that a warm build gives the cold
# build's pages and warnings. Set by the session fixture below.
_shared_verdicts: Path | None = None
VERDICTS = Path(".cache/plugin/po-i18n")  # the plugin's cache_dir default, which mkdocs.yml keeps


@pytest.fixture(scope="session", autouse=True)
def shared_verdicts(tmp_path_factory) -> Path:
    """The session's verdict folder (under the run's base temporary folder, the same for
    every xdist worker), started from the checkout's own cache where it has one."""
    global _shared_verdicts
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "po-i18n-verdicts"
    folder.mkdir(exist_ok=True)
    seed, target = ROOT / VERDICTS / "verdicts.json", folder / "verdicts.json"
    if seed.is_file() and not target.exists():
        partial = folder / f".seed-{os.getpid()}"
        shutil.copyfile(seed, partial)
        os.replace(partial, target)
    _shared_verdicts = folder
    return folder


def share_verdicts(site: Path) -> Path:
    """Point a scratch copy's verdict cache (``site/.cache/plugin/po-i18n``) at the
    session's; returns ``site``. Outside a session (no fixture yet) it does nothing."""
    if _shared_verdicts is not None and not (site / VERDICTS).exists():
        (site / VERDICTS).parent.mkdir(parents=True, exist_ok=True)
        (site / VERDICTS).symlink_to(_shared_verdicts, target_is_directory=True)
    return site


def copy_project(into: Path, items: tuple[str, ...] = ("mkdocs.yml", "docs", "i18n", "snippets", "hooks")) -> Path:
    """Copy the parts of the project a scratch build or command needs, its verdict cache
    shared with the session's other copies (:func:`share_verdicts`); returns ``into``."""
    for item in items:
        src = ROOT / item
        if src.is_dir():
            shutil.copytree(src, into / item, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, into / item)
    return share_verdicts(into) if "mkdocs.yml" in items else into


def po_i18n_command(project, *args: str, capsys) -> tuple[int, list[str], list[str]]:
    """Run ``po-i18n --config <project>/mkdocs.yml ARGS`` in this process (a
    ``po_i18n.project.Project``): ``(exit status, stdout lines, stderr lines)``."""
    from po_i18n import cli

    status = cli.main(["--config", str(project.root / "mkdocs.yml"), *args])
    out = capsys.readouterr()
    return status, out.out.splitlines(), out.err.splitlines()


def replace_once(path: Path, old: str, new: str) -> None:
    """Replace the one occurrence of ``old`` in a text file (asserts there is exactly one)."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def copy_snippet(program: Path, into: Path) -> Path:
    """A fresh folder holding only the program and its local imports (what a reader
    copies from the page); returns the copied program."""
    from torchjob import bare_folder

    return bare_folder(program, into / program.parent.name) / program.name


def import_program(program: Path) -> ModuleType:
    """Import a snippet program as a module (its ``main()`` is guarded and does not run)."""
    spec = importlib.util.spec_from_file_location(f"snippet_{program.parent.name}_{program.stem}", program)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_snippet(program: Path, tmp_path_factory, config, *, plugins: tuple[str, ...] = (),
                exact_world_size: int | None = None):
    """Run a program's own launch line, with the harness, in a fresh folder, and prove it ran.

    Args:
        program: the snippet program (its docstring holds the launch spec).
        tmp_path_factory, config: pytest's, for the scratch folder and the
            ``--nproc-per-node`` option.
        plugins: recorder modules from ``tests/harness`` to load in every worker; each
            must leave something in ``RECORD["extra"]`` on every rank.
        exact_world_size: skip (with the reason) unless the job has exactly this many
            processes, for programs written for one world size.

    Returns:
        The :class:`torchjob.JobResult`, with ``world_size`` set. For ``outcome:
        passes`` (the default), after :meth:`~torchjob.JobResult.check` passed within
        the program's time limit; for a "break it" program, after the job failed as its
        page says (``fails``: exited non-zero on its own within the limit; ``hangs``:
        still running at the limit, or seen blocked where its ``blocked-in:`` lines say
        for ``torchjob.SETTLE_S`` seconds, so it was stopped and every rank's stack
        dumped to its log), with no process left either way. The job's environment is the
        page's (see ``torchjob.check_page_env``).
    """
    from coursekit.runspec import launch_shape, read_spec
    from torchjob import Hang, run_job
    from verification_plugin import effective_line, hardware_env

    spec = read_spec(program)
    line = effective_line(spec, config)
    nproc, nnodes = launch_shape(line, program.parent)
    if exact_world_size is not None and nproc * nnodes != exact_world_size:
        pytest.skip(f"{program.name} runs with exactly {exact_world_size} processes, not {nproc * nnodes}")
    copy = copy_snippet(program, tmp_path_factory.mktemp(program.stem))
    result = run_job(line, copy.parent, spec.time_limit_s, hardware=hardware_env(nproc, needs_cuda=spec.cuda_gpus > 0)[0],
                     plugins=plugins, hang=Hang.of(spec, nproc * nnodes))
    result.world_size = nproc * nnodes
    if spec.outcome == "fails":
        assert not result.timed_out and result.returncode != 0, f"expected to fail on its own\n{result.report()}"
        assert not result.leftovers, f"processes left running: {result.leftovers}\n{result.report()}"
        return result
    if spec.outcome == "hangs":
        assert result.timed_out, f"expected to hang until stopped\n{result.report()}"
        assert not result.leftovers, f"processes left running: {result.leftovers}\n{result.report()}"
        return result
    result.check(result.world_size)
    assert result.duration_s < spec.time_limit_s
    if plugins:
        assert all(rec["extra"] for rec in result.records.values()), f"the recorders {plugins} did not load in the workers"
    return result


def bare_run_test(program: Path, reference: str | None = "job", stdout: tuple[str, ...] = (),
                  harness_run: str | None = None, untangle_with: str | None = None):
    """The bare-run test of a program, to assign to ``test_bare_run`` in its test module.

    The test runs the program's launch line as a reader does (``torchjob.run_bare``:
    a fresh folder with only the program and its local imports, the reader's
    environment, no harness), once per ``--bare-runs``, one agent per node for a
    ``--nnodes=N`` line (a line that submits a Slurm batch script is submitted once, to
    the session's ``slurm_cluster``), and asserts the page's outcome: for ``outcome: passes`` every
    agent exits 0 within the time limit; ``fails``: the job exits non-zero on its own,
    within the limit; ``hangs``: it is still running at the limit, or was stopped once
    seen blocked where its ``blocked-in:`` lines say (``torchjob.Hang``). Always: no
    process is left. Then the stdout:

    Args:
        program: the snippet program.
        reference: the name of the module's fixture giving the verified harness run
            (a ``JobResult``, or a list of them for a multi-node job) whose per-rank
            output the bare run must reproduce, line for line up to run-specific parts
            (``run_output.normalize``); that output is stored in the record. ``None``
            for programs whose output is not reproducible (it is then not stored).
        stdout: regular expressions (``re.M``) the bare run's stdout must match: what
            the page says the program prints.
        harness_run: the fixture of the verified harness run whose ranks say what the
            job ran on (:func:`ran_on`, stored in the record); defaults to ``reference``.
        untangle_with: with ``reference=None``, the fixture of a harness run whose
            printed lines (``run_output.printed_lines``) split terminal lines that
            several ranks wrote into at once before ``stdout`` is matched; nothing of
            it is stored.
    """
    import re

    from coursekit.runspec import launch_shape, read_spec

    def test_bare_run(bare_run_index, tmp_path, pytestconfig, request):
        from run_output import per_rank, printed_lines, same_lines, worker_lines
        from torchjob import Hang, bare_folder, run_nodes
        from verification_plugin import effective_line, hardware_env

        spec = read_spec(program)
        line = effective_line(spec, pytestconfig)
        nproc, nnodes = launch_shape(line, program.parent)
        terminals = nnodes
        if line.submits is not None:
            request.getfixturevalue("slurm_cluster")
            terminals = 1  # one sbatch, from one folder; Slurm starts the nodes
        cwds = [bare_folder(program, tmp_path / f"node{i}") for i in range(terminals)]
        hardware = hardware_env(nproc, terminals, needs_cuda=spec.cuda_gpus > 0)
        nodes = run_nodes(line, cwds, spec.time_limit_s, bare=True, hardware=hardware, hang=Hang.of(spec, nproc * nnodes))
        report = "\n\n".join(node.report() for node in nodes)
        assert all(not node.leftovers for node in nodes), f"processes left running\n{report}"
        if spec.outcome == "passes":
            for node in nodes:
                node.check_exit()
        elif spec.outcome == "fails":
            assert not any(node.timed_out for node in nodes), f"expected to fail, but it ran past its time limit\n{report}"
            assert any(node.returncode != 0 for node in nodes), f"expected to fail, but every agent exited 0\n{report}"
        else:
            assert all(node.timed_out for node in nodes), f"expected to hang until stopped, but it ended\n{report}"
        expected = per_rank(request.getfixturevalue(reference)) if reference is not None else {}
        known = [line for lines in expected.values() for line in lines]
        if untangle_with is not None:
            known += printed_lines(request.getfixturevalue(untangle_with))
        text = "\n".join(node.stdout_text for node in nodes)
        untangled = "\n".join(worker_lines(nodes, known))
        # what the page says it prints holds for the page's number of processes
        page_shape = pytestconfig.getoption("--nproc-per-node") is None
        for pattern in stdout if page_shape else ():
            assert re.search(pattern, text, re.M) or re.search(pattern, untangled, re.M), (
                f"the page says the program prints {pattern!r}; it did not\n{report}")
        if reference is not None:
            missing, extra = same_lines(nodes, expected)
            assert not missing and not extra, (
                f"the bare run did not reproduce the verified run's output\n"
                f"missing: {missing}\nextra: {extra}\n{report}")
            request.node.user_properties.append(("output", expected))
        if (harness_run or reference) is not None:
            request.node.user_properties.append(("ran_on", ran_on(request.getfixturevalue(harness_run or reference))))

    test_bare_run.__doc__ = f"{program.name}, launched bare as its page shows, does what the page says."
    return test_bare_run


def ran_on(verified) -> dict:
    """What a verified harness run (a ``JobResult`` or a list, one per node) really ran on,
    from every rank's record (``tests/harness``: ``ran_on`` at ``destroy_process_group``):
    ``{"backend", "device", "device_count", "processes"}``, ``device_count`` being the
    distinct physical GPUs the ranks used (by UUID, else host and index). Empty when a
    rank left no such record (an outcome other than passes)."""
    nodes = verified if isinstance(verified, list) else [verified]
    seen = [rec.get("ran_on") for node in nodes for rec in node.records.values()]
    if not seen or any(r is None for r in seen):
        return {}
    backends = sorted({r["backend"] for r in seen})
    gpus = {(c["uuid"] or f"{c['host']}:{c['visible']}:{c['index']}") for r in seen if (c := r["cuda"])}
    return {"backend": backends[0] if len(backends) == 1 else ",".join(backends),
            "device": "cuda" if gpus else "cpu", "device_count": len(gpus), "processes": len(seen)}


@pytest.fixture(scope="session")
def root() -> Path:
    """The project root (the folder holding mkdocs.yml)."""
    return ROOT


def snippet_section(path: Path, name: str) -> str:
    """The lines of a pymdownx.snippets section, as the extension includes them
    (markers of nested sections dropped, common indentation removed)."""
    lines, inside = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if re.search(rf"--8<-- \[start:{name}\]", line):
            inside = True
        elif re.search(rf"--8<-- \[end:{name}\]", line):
            break
        elif inside and not re.search(r"--8<-- \[(start|end):", line):
            lines.append(line)
    return textwrap.dedent("\n".join(lines))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the item, so fixtures can act on a failed test."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
