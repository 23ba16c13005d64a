"""Every program's device rule, for the GPU counts readers have: none, one GPU for two
processes, two GPUs for four, and a GPU per process.

Each program is a bare file with its own ``choose_device(local_rank, local_world_size,
gpus) -> (device, backend)``; this imports it (``main()`` is guarded and does not run)
and checks its choice. NCCL refuses two ranks of one communicator on one GPU, so NCCL
only with a GPU per local process (``docs/index.md``, "Before you start"); a program
that needs CUDA (``requires: cuda>=N``) shares fewer GPUs over gloo; a program that runs
on the CPU on purpose (a "break it" program that teaches a logic error, whose failure
NCCL would show elsewhere) has no rule and never touches CUDA.
"""
from __future__ import annotations

import ast
import functools
import warnings

import pytest

from conftest import SNIPPETS, import_program
from coursekit.runspec import read_spec

# CPU and gloo whatever the machine has; each page says why and what NCCL would do.
CPU_ON_PURPOSE = {
    "data_vs_model_parallelism/pipeline_hang.py",
    "ddp_basics/uneven_inputs_no_join.py",
    "syncbn_and_sharding/dcp_save_rank0.py",
    "syncbn_and_sharding/syncbn_on_cpu.py",
    "torchrun_launching/collective_timeout.py",
    "torchrun_launching/stuck.py",
}
# Programs that are another program with a different launch line (they import its main).
SAME_PROGRAM = {"torchrun_launching/multinode_standalone.py": "torchrun_launching/multinode_train.py"}

PROGRAMS = sorted(p.relative_to(SNIPPETS).as_posix() for p in SNIPPETS.glob("*/*.py"))
# (GPUs on the node, processes on the node): none; one GPU, two processes (a laptop);
# two GPUs, four processes; a GPU for every process.
CASES = [(0, 2), (1, 2), (2, 4), (2, 2), (8, 4), (1, 1)]


def test_every_program_is_classified():
    """A new program either has a rule or is named here as CPU on purpose."""
    ruled = {p for p in PROGRAMS if "def choose_device(" in (SNIPPETS / p).read_text(encoding="utf-8")}
    assert ruled | CPU_ON_PURPOSE | set(SAME_PROGRAM) == set(PROGRAMS), (
        f"no choose_device and not CPU on purpose: {sorted(set(PROGRAMS) - ruled - CPU_ON_PURPOSE - set(SAME_PROGRAM))}")
    assert not ruled & CPU_ON_PURPOSE


@functools.lru_cache(maxsize=None)
def rule_of(program: str):
    """The program's ``choose_device``; imported once (torch's own modules that a program
    imports, e.g. ``ZeroRedundancyOptimizer``'s, may warn about their own deprecations)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return import_program(SNIPPETS / program).choose_device


def expected(program: str, local_rank: int, local_world_size: int, gpus: int) -> tuple[str, str] | None:
    """(device, backend) the rule must give; None: the program must refuse to start."""
    needs_cuda = read_spec(SNIPPETS / program).cuda_gpus > 0
    if gpus >= local_world_size:
        return f"cuda:{local_rank}", "nccl"
    if needs_cuda:
        return (f"cuda:{local_rank % gpus}", "gloo") if gpus else None
    return "cpu", "gloo"


@pytest.mark.parametrize("program", sorted(set(PROGRAMS) - CPU_ON_PURPOSE - set(SAME_PROGRAM)))
@pytest.mark.parametrize("gpus,local_world_size", CASES, ids=[f"{g}gpus-{n}procs" for g, n in CASES])
def test_choose_device(program, gpus, local_world_size):
    choose = rule_of(program)
    for local_rank in range(local_world_size):
        want = expected(program, local_rank, local_world_size, gpus)
        if want is None:
            with pytest.raises(SystemExit):
                choose(local_rank, local_world_size, gpus)
            continue
        device, backend = choose(local_rank, local_world_size, gpus)
        assert (str(device), backend) == want, f"{program}: local rank {local_rank} of {local_world_size}, {gpus} GPUs"


@pytest.mark.parametrize("program", sorted(set(PROGRAMS) - CPU_ON_PURPOSE - set(SAME_PROGRAM)))
def test_nccl_init_names_its_device(program):
    """Where the rule picks NCCL, ``init_process_group`` gets ``device_id=``: the group is
    bound to the GPU (no barrier warning) and NCCL's communicator is made at once
    (``torch.distributed.init_process_group``'s docstring, ``device_id``)."""
    tree = ast.parse((SNIPPETS / program).read_text(encoding="utf-8"))
    inits = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and getattr(node.func, "attr", None) == "init_process_group"]
    assert inits and any(kw.arg == "device_id" for call in inits for kw in call.keywords), (
        f"{program}: the NCCL init_process_group has no device_id=")


@pytest.mark.parametrize("program", sorted(CPU_ON_PURPOSE))
def test_cpu_on_purpose_never_touches_cuda(program):
    """A program pinned to the CPU says so and inits gloo, whatever the GPUs."""
    tree = ast.parse((SNIPPETS / program).read_text(encoding="utf-8"))
    for node in ast.walk(tree):  # docstrings may talk about NCCL; the code may not use it
        if isinstance(node, (ast.Module, ast.FunctionDef)) and ast.get_docstring(node) is not None:
            node.body = node.body[1:] or [ast.Pass()]
    code = ast.unparse(tree)  # comments are gone too
    assert "cuda" not in code and "nccl" not in code, f"{program} is pinned to the CPU but uses CUDA or NCCL"
    assert "init_process_group(backend='gloo'" in code, f"{program}: init_process_group(backend=\"gloo\") expected"


@pytest.mark.parametrize("program", PROGRAMS)
def test_every_fully_shard_gets_the_programs_mesh(program):
    """Without ``mesh=``, ``fully_shard`` builds its own mesh on the default accelerator, a
    GPU whenever one is visible (``torch/distributed/fsdp/_fully_shard/_fsdp_init.py``,
    ``_init_default_mesh``), even when the program chose the CPU and gloo."""
    tree = ast.parse((SNIPPETS / program).read_text(encoding="utf-8"))
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and getattr(node.func, "id", getattr(node.func, "attr", None)) == "fully_shard"]
    bare = [ast.unparse(call) for call in calls if not any(kw.arg == "mesh" for kw in call.keywords)]
    assert not bare, f"{program}: fully_shard without mesh=: {bare}"


def test_a_program_can_require_a_torch_release(tmp_path):
    """``requires: torch>=X.Y`` in a docstring: on an older torch the program's tests are
    skipped with the reason (tests/verification_plugin.py), never run to a false failure."""
    from coursekit.runspec import read_spec as spec_of

    assert spec_of(SNIPPETS / "torchrun_launching" / "default_port.py").torch_min == (2, 13)
    assert spec_of(SNIPPETS / "ddp_basics" / "train.py").torch_min == ()
    program = tmp_path / "p.py"
    program.write_text('"""x\n--8<-- [start:launch]\ntorchrun --standalone --nproc-per-node=2 p.py\n'
                       '--8<-- [end:launch]\ntime-limit: 60 s\nrequires: torch>=99.1\n"""\n')
    assert spec_of(program).torch_min == (99, 1)


def test_every_program_that_hangs_says_where(tmp_path):
    """``blocked-in:`` lines (hooks/coursekit/runspec.py): every hang-by-design program
    names where each party blocks, on exactly one line of its code, and a malformed or
    misplaced line is refused with the file and the remedy."""
    from coursekit.runspec import RunSpecError, read_spec as spec_of

    for program in PROGRAMS:
        spec = spec_of(SNIPPETS / program)
        assert bool(spec.blocked_in) == (spec.outcome == "hangs"), program
        for blocked in spec.blocked_in:
            if blocked.line is not None:
                assert blocked.where in (SNIPPETS / program).read_text().splitlines()[blocked.line - 1], program
    stuck = spec_of(SNIPPETS / "torchrun_launching" / "stuck.py")
    assert [(b.who, b.rank, b.where) for b in stuck.blocked_in] == [
        ("rank 0", 0, "dist.all_reduce(loss)"), ("other ranks", None, "dist.barrier()")]
    head = '"""x\n--8<-- [start:launch]\ntorchrun --standalone --nproc-per-node=2 p.py\n--8<-- [end:launch]\ntime-limit: 60 s\n'
    program = tmp_path / "p.py"
    for lines, problem in [("outcome: hangs\nblocked-in: rank 0: wait()\n", "matches 2 lines"),
                           ("outcome: hangs\nblocked-in: rank 0: nowhere()\n", "matches 0 lines"),
                           ("outcome: hangs\nblocked-in: rank zero: go()\n", "is not 'blocked-in:"),
                           ("outcome: hangs\nblocked-in: rank 0: go()\nblocked-in: rank 0: go()\n", "two 'blocked-in: rank 0:'"),
                           ("blocked-in: rank 0: go()\n", "not 'passes'")]:
        program.write_text(head + lines + '"""\ngo()\nwait()\nwait()\n')
        with pytest.raises(RunSpecError, match=problem):
            spec_of(program)
