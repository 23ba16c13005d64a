"""snippets/ddp_basics/compression_hooks.py, run exactly as docs/ddp-basics.md says.

The page's claims: ``fp16_compress_hook`` all-reduces every gradient value once, as
float16, and the gradient each rank gets is the average rounded to float16, off by a few
hundredths of a percent; ``powerSGD_hook`` runs the plain float32 all-reduce for the
first ``start_powerSGD_iter`` steps, then sends, per weight matrix worth compressing,
P (rows x r) and Q (columns x r) and everything else (biases, a matrix too small to
gain) uncompressed, 15 times fewer values here; each compressed matrix arrives as a
matrix of rank r, and a step's gradient is more than half its size away from the exact
average, while the uncompressed tensors arrive exact; error feedback adds what a step
left out on a rank to that rank's next gradient. The errors the program prints are what
the records show.
"""
from __future__ import annotations

import gc
import inspect
import re

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
from torch.nn.parallel import DistributedDataParallel

from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, PAGE, extra, quiz_answer, run

PROGRAM = FOLDER / "compression_hooks.py"
program = import_program(PROGRAM)
_SOURCE = PROGRAM.read_text(encoding="utf-8")
# PowerSGDState's arguments as the program (and so the page) passes them
APPROX_RANK = int(re.search(r"matrix_approximation_rank=(\d+)", _SOURCE)[1])  # r
START = int(re.search(r"start_powerSGD_iter=(\d+)", _SOURCE)[1])
_FP16 = re.compile(r"^fp16_compress_hook: sends (?P<sent>[\d,]+) values a step in float16, not float32$",
                   re.M)
_POWER = re.compile(r"^powerSGD_hook: sends (?P<sent>[\d,]+) values a step for (?P<numel>[\d,]+)"
                    r" from step (?P<start>\d+) on \((?P<rate>[\d.]+)x fewer\)$", re.M)
_ERRORS = re.compile(r"^  error of each step's gradient: (?P<errors>.+)$", re.M)
_OVERFLOW = re.compile(r"^fp16_compress_hook: 100,000 on rank 0, 0 on rank 1: the average arrives as"
                       r" (?P<got>\S+)$", re.M)
NUMEL = sum(p.numel() for p in program.make_model().parameters())

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("ddp_basics/compression_hooks.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    # the exact float16 sums and the rank 0 / rank 1 overflow are worked out for two ranks
    return run(PROGRAM, tmp_path_factory, pytestconfig, exact_world_size=2)


def calls(job: JobResult, rank: int, hook: str) -> list[dict]:
    """The recorded calls of one hook on the training model of one rank, in order: one per
    step (the model fits one bucket)."""
    found = [b for b in extra(job, rank)["buckets"] if b["hook"] == hook and b["numel"] == NUMEL]
    assert len(found) == program.STEPS, f"rank {rank}: {len(found)} calls of {hook}, one per step expected"
    return found


def average_in(job: JobResult, hook: str, step: int) -> torch.Tensor:
    """The exact average of the ranks' local gradients that a step's hook was given."""
    return torch.stack([calls(job, r, hook)[step]["grad_in"] for r in range(job.world_size)]).mean(dim=0)


def printed_errors(job: JobResult, which: int) -> list[float]:
    """The errors the program printed for its first (0) or second (1) hook, as fractions."""
    lines = _ERRORS.findall(job.stdout(0))
    assert len(lines) == 2, job.stdout(0)
    return [float(e.rstrip("%")) / 100 for e in lines[which].split()]


def relative_error(got: torch.Tensor, exact: torch.Tensor) -> float:
    """||got - exact|| / ||exact||, the distance the program prints, as a fraction."""
    return ((got - exact).norm() / exact.norm()).item()


def assert_printed(printed: float, measured: float) -> None:
    """The program prints two significant digits of a percentage."""
    assert abs(printed - measured) <= 0.05 * measured + 1e-12, (printed, measured)


def split(flat: torch.Tensor, shapes: list[tuple[int, ...]]) -> list[torch.Tensor]:
    """A bucket's flat buffer cut into its parameters' pieces (each still flat), in order."""
    sizes = [torch.Size(shape).numel() for shape in shapes]
    assert sum(sizes) == flat.numel()
    return list(flat.split(sizes))


def compressed(shape: tuple[int, ...]) -> bool:
    """PowerSGD's rule (``_should_compress``, min_compression_rate 2): a matrix is sent
    as P and Q when (rows + columns) x r, doubled, is still fewer values than it has."""
    if len(shape) < 2:
        return False
    rows, cols = shape[0], torch.Size(shape[1:]).numel()
    r = min(rows, cols, APPROX_RANK)
    return (rows + cols) * r * 2 < rows * cols


def test_fp16_sends_every_value_once_as_float16(job):
    numel = sum(p.numel() for p in program.make_model().parameters())
    assert int(_FP16.search(job.stdout(0))["sent"].replace(",", "")) == numel
    for r in range(job.world_size):
        for call in calls(job, r, "fp16_compress_hook"):
            assert call["dtype"] == torch.float32 and call["numel"] == numel
            assert call["sent"] == [(numel, torch.float16)]


def test_fp16_gives_the_average_rounded_to_float16(job):
    errors = []
    for step in range(program.STEPS):
        exact = average_in(job, "fp16_compress_hook", step)
        halves = sum(calls(job, r, "fp16_compress_hook")[step]["grad_in"].half() / job.world_size
                     for r in range(job.world_size))
        for r in range(job.world_size):
            got = calls(job, r, "fp16_compress_hook")[step]["grad_out"]
            assert torch.equal(got, halves.float()), f"rank {r}, step {step}"
        errors.append(relative_error(halves.float(), exact))
    assert all(1e-4 < e < 1e-3 for e in errors), errors  # a few hundredths of a percent
    for printed, measured in zip(printed_errors(job, 0), errors, strict=True):
        assert_printed(printed, measured)


def test_fp16_casts_before_it_divides_so_one_rank_s_large_value_overflows(job):
    # 100,000 on rank 0 and 0 on rank 1 average 50,000, which float16 holds; divided
    # before the cast, the sum would be 50,000. Cast first, 100,000 is already inf.
    assert _OVERFLOW.search(job.stdout(0))["got"] == "inf"
    for r in range(job.world_size):
        [call] = [b for b in extra(job, r)["buckets"] if b["hook"] == "fp16_compress_hook" and b["numel"] == 1]
        assert call["grad_in"].item() == (100_000.0 if r == 0 else 0.0)
        assert call["sent"] == [(1, torch.float16)]
        assert call["grad_out"].item() == float("inf")
    assert torch.isfinite(torch.tensor(50_000.0).half())  # the average would fit (as 49,984)


def test_powersgd_s_defaults_are_the_page_s():
    # the page: start_powerSGD_iter 1,000 by default, min_compression_rate 2, rank 1 unless set
    params = inspect.signature(powerSGD_hook.PowerSGDState).parameters
    assert params["start_powerSGD_iter"].default == 1_000
    assert params["min_compression_rate"].default == 2
    assert params["use_error_feedback"].default is True and params["warm_start"].default is True
    with pytest.raises(ValueError, match="start_powerSGD_iter"):  # 2 is the smallest allowed
        powerSGD_hook.PowerSGDState(process_group=None, start_powerSGD_iter=1)


@pytest.mark.skipif(torch.version.cuda is not None or torch.version.hip is not None,
                    reason="the page says the CPU build refuses bf16_compress_hook; this is a GPU build")
def test_the_cpu_build_refuses_bf16_compress_hook():
    # a real gloo process group of one process in this test's process, for DDP to wrap
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    model = None
    try:
        model = DistributedDataParallel(nn.Linear(2, 2))
        with pytest.raises(TypeError, match="BF16"):
            model.register_comm_hook(None, default_hooks.bf16_compress_hook)
        model.register_comm_hook(None, default_hooks.fp16_compress_hook)  # the same call works for fp16
    finally:
        del model  # DDP holds the process group, in reference cycles
        gc.collect()
        dist.destroy_process_group()


def test_the_page_s_numbers_are_the_program_s(job):
    shapes = [tuple(p.shape) for p in program.make_model().parameters()]
    sent = [(s[0] + s[1]) * APPROX_RANK for s in shapes if compressed(s)]
    weights = [torch.Size(s).numel() for s in shapes if len(s) == 2 and not compressed(s)]
    biases = [torch.Size(s).numel() for s in shapes if len(s) == 1]
    m = _POWER.search(job.stdout(0))
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert f"prints {m['sent']} values a step instead of {m['numel']}, 15 times fewer" in text
    assert f"one column each ({sent[0]} and {sent[1]} values)" in text
    assert f"1 × 64 weight and the three biases ({weights[0]} + {sum(biases)} values)" in text
    assert len(weights) == 1 and len(biases) == 3


def test_powersgd_runs_the_plain_all_reduce_for_the_first_steps(job):
    numel = sum(p.numel() for p in program.make_model().parameters())
    for step in range(START):
        exact = average_in(job, "powerSGD_hook", step)
        for r in range(job.world_size):
            call = calls(job, r, "powerSGD_hook")[step]
            assert call["sent"] == [(numel, torch.float32)]
            torch.testing.assert_close(call["grad_out"], exact, rtol=1e-6, atol=1e-7)
    assert printed_errors(job, 1)[:START] == [0.0] * START


def test_powersgd_then_sends_p_and_q_and_the_rest_uncompressed(job):
    shapes = [tuple(p.shape) for p in program.make_model().parameters()]
    expected = sum((s[0] + s[1]) * APPROX_RANK if compressed(s) else torch.Size(s).numel() for s in shapes)
    m = _POWER.search(job.stdout(0))
    assert m, job.stdout(0)
    assert int(m["sent"].replace(",", "")) == expected
    assert int(m["numel"].replace(",", "")) == sum(torch.Size(s).numel() for s in shapes)
    assert int(m["start"]) == START and 14 < float(m["rate"]) < 16
    for r in range(job.world_size):
        for call in calls(job, r, "powerSGD_hook")[START:]:
            # one batch of the uncompressed tensors, then the Ps, then the Qs
            assert len(call["sent"]) == 3 and {d for _, d in call["sent"]} == {torch.float32}
            assert sum(n for n, _ in call["sent"]) == expected


def test_powersgd_gives_rank_r_matrices_and_exact_uncompressed_tensors(job):
    errors = printed_errors(job, 1)
    assert len(errors) == program.STEPS
    for step in range(START, program.STEPS):
        exact = average_in(job, "powerSGD_hook", step)
        for r in range(job.world_size):
            call = calls(job, r, "powerSGD_hook")[step]
            shapes = call["shapes"]
            for shape, got, want in zip(shapes, split(call["grad_out"], shapes), split(exact, shapes), strict=True):
                if compressed(shape):
                    matrix = got.view(shape[0], -1)
                    assert torch.linalg.matrix_rank(matrix).item() == APPROX_RANK, f"rank {r}, step {step}, {shape}"
                    assert relative_error(got, want) > 0.1, f"rank {r}, step {step}, {shape}"
                else:
                    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
            assert_printed(errors[step], relative_error(call["grad_out"], exact))


def test_powersgd_feeds_back_what_compression_left_out(job):
    # P = M Q is made orthonormal, Q = M^T P averaged: each compressed matrix arrives as
    # P P^T (the average of what the ranks compressed). With error feedback a rank
    # compresses its gradient plus what the previous step left out of it; so the output
    # is that projection of the fed-back average, and not of the bare gradients' average.
    errors = [torch.zeros(calls(job, r, "powerSGD_hook")[0]["numel"]) for r in range(job.world_size)]
    for step in range(START, program.STEPS):
        steps = [calls(job, r, "powerSGD_hook")[step] for r in range(job.world_size)]
        fed = [c["grad_in"] + e for c, e in zip(steps, errors, strict=True)]
        out = steps[0]["grad_out"]
        for c in steps[1:]:
            assert torch.equal(c["grad_out"], out), f"step {step}: the ranks got different gradients"
        fed_avg = torch.stack(fed).mean(dim=0)
        bare_avg = torch.stack([c["grad_in"] for c in steps]).mean(dim=0)
        shapes = steps[0]["shapes"]
        checked = 0
        for shape, got, want, bare_want in zip(shapes, split(out, shapes), split(fed_avg, shapes),
                                               split(bare_avg, shapes), strict=True):
            if not compressed(shape):
                continue
            checked += 1
            matrix = got.view(shape[0], -1)
            u = torch.linalg.svd(matrix, full_matrices=False).U[:, :APPROX_RANK]
            project = lambda m: (u @ u.T @ m.view(shape[0], -1)).flatten()  # noqa: E731
            torch.testing.assert_close(got, project(want), rtol=1e-4, atol=1e-6, msg=lambda m: f"step {step}, {shape}: {m}")
            if step > START:  # the first compressed step has nothing to feed back yet
                assert relative_error(project(bare_want), got) > 1e-2, f"step {step}, {shape}: no error fed back"
        assert checked == 2, f"step {step}: {checked} compressed matrices, the model's two larger weights expected"
        errors = [f - out for f in fed]


def test_one_step_of_powersgd_is_more_than_half_off(job):
    assert all(e > 0.5 for e in printed_errors(job, 1)[START:]), printed_errors(job, 1)


def test_the_quiz_answer_is_what_the_program_printed(job):
    m = _POWER.search(job.stdout(0))
    assert quiz_answer("How many values does `compression_hooks.py`") == (
        f"{m['sent']} values a step instead of {m['numel']}: for each weight matrix worth"
        " compressing, only P and Q."
    )


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(
    r"^fp16_compress_hook: sends 6,337 values a step in float16, not float32$",
    r"^powerSGD_hook: sends 417 values a step for 6,337 from step 2 on \(15\.2x fewer\)$",
))
