"""snippets/data_vs_model_parallelism/pipeline_interleaved.py, run exactly as docs/data-vs-model-parallelism.md says.

The claims: each rank runs exactly the passes its schedule plans (torch's own
``pipeline_order``); the printed timelines and bubbles follow from those orders on the
page's clock (the test's own replay, written differently from the program's); with two
stages per rank, the idle time of interleaved 1F1B is half that of one stage per rank
once there are at least as many micro-batches as ranks, and no smaller with fewer; the
zero-bubble schedule fills all but one unit by splitting the backward pass; interleaving
keeps more forward passes in flight; and every step computes the unsplit model's loss and
gradients.
"""
from __future__ import annotations

import functools
import re
from fractions import Fraction

import pytest
import torch
from torch import nn

from conftest import ROOT, bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, TOL, _assert_all_close, _grads, _lines, _load, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("data_vs_model_parallelism/pipeline_interleaved.py")]

PROGRAM = FOLDER / "pipeline_interleaved.py"
PAGE = ROOT / "docs" / "data-vs-model-parallelism.md"
program = import_program(PROGRAM)
RANKS = 2
RUNS = [(schedule.__name__, m) for schedule, m in program.RUNS]
PASSES = {"ScheduleInterleaved1F1B": "FB", "ScheduleInterleavedZeroBubble": "FIW"}
_BUBBLE = re.compile(r"^(?P<name>\w+), m=(?P<m>\d+): bubble (?P<bubble>\d+(?:/\d+)?) \((?P<idle>\d+) of "
                     r"(?P<span>\d+) units\), at most (?P<flight>\d+) forward passes in flight on rank 0$", re.M)


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(PROGRAM, tmp_path_factory, pytestconfig, exact_world_size=RANKS,
                plugins=("record_data_vs_model_parallelism_pipelining",))


def _passes(job: JobResult, rank: int) -> list[list[tuple[str, int, int]]]:
    """Each step's passes on one rank, as the harness saw the stages' calls."""
    passes = [tuple(p) for p in job.records[rank]["extra"]["pp_passes"]]
    per_step = [2 * m * len(PASSES[name]) for name, m in RUNS]  # two stages per rank
    assert len(passes) == sum(per_step)
    bounds = [sum(per_step[:i]) for i in range(len(per_step) + 1)]
    return [passes[a:b] for a, b in zip(bounds, bounds[1:])]


def _replay(orders: list[list[tuple[str, int, int]]], stages: int = program.STAGES,
            layers: int = 1) -> list[int]:
    """The test's own clock: each pass ends COST x ``layers`` units after the later of the
    end of the rank's previous pass and the end of the pass it needs (F: the same
    micro-batch's F on the stage before; B or I: the B or I of the stage after; W: its own
    I), for a pipeline of ``stages`` stages of ``layers`` layers each. Returns each rank's
    idle units, then the span (the latest end)."""
    where = {p: (r, k) for r, order in enumerate(orders) for k, p in enumerate(order)}
    last = stages - 1

    @functools.cache
    def end(r: int, k: int) -> int:
        kind, stage, micro = orders[r][k]
        ready = end(r, k - 1) if k else 0
        if kind == "F" and stage > 0:
            needed = [("F", stage - 1, micro)]
        elif kind in "BI" and stage < last:
            needed = [(b, stage + 1, micro) for b in "BI" if (b, stage + 1, micro) in where]
        elif kind == "W":
            needed = [("I", stage, micro)]
        else:
            needed = []
        for p in needed:
            ready = max(ready, end(*where[p]))
        return ready + program.COST[kind] * layers

    ends = [end(r, len(order) - 1) for r, order in enumerate(orders)]
    span = max(ends)
    busy = [sum(program.COST[kind] * layers for kind, _, _ in order) for order in orders]
    return [span - b for b in busy] + [span]


def _printed(job: JobResult) -> dict[tuple[str, int], re.Match]:
    return {(m["name"], int(m["m"])): m for m in _BUBBLE.finditer(job.stdout(0))}


def test_each_rank_holds_two_stages_and_runs_what_its_schedule_plans(job):
    for rank in range(RANKS):
        held = [tuple(p.shape) for p in job.records[rank]["extra"]["steps"][0]["params"]]
        assert held == [tuple(p.shape) for i in (rank, rank + RANKS) for p in program.build_stage(i).parameters()]
        steps = job.records[rank]["extra"]["pp_multi_steps"]
        assert [(s["schedule"], s["n_microbatches"]) for s in steps] == RUNS
        for step, ran in zip(steps, _passes(job, rank)):
            planned = [tuple(a) for a in step["plan"][rank] if a is not None]
            assert ran == planned, f"rank {rank}, {step['schedule']} m={step['n_microbatches']}"
            assert {kind for kind, _, _ in ran} == set(PASSES[step["schedule"]])


def test_the_printed_bubbles_follow_from_the_orders(job):
    printed = _printed(job)
    assert set(printed) == set(RUNS)
    for i, run in enumerate(RUNS):
        orders = [_passes(job, r)[i] for r in range(RANKS)]
        *idle, span = _replay(orders)
        line = printed[run]
        assert (int(line["idle"]), int(line["span"])) == (idle[0], span), run
        assert Fraction(line["bubble"]) == Fraction(idle[0], span)
        # forward passes whose backward (B, or I when it is split) has not run: the test's own count
        running = [sum(1 if k == "F" else -1 for k, _, _ in orders[0][:n + 1] if k != "W") for n in range(len(orders[0]))]
        assert int(line["flight"]) == max(running)


def test_the_printed_timeline_is_what_the_ranks_ran(job):
    lines = _lines(job, 0)
    for i, (name, m) in enumerate(RUNS):
        if m != max(mb for _, mb in RUNS):
            continue
        orders = [_passes(job, r)[i] for r in range(RANKS)]
        rows = program.timeline(orders)
        start = lines.index(f"{name}, m={m}:")
        assert lines[start + 1:start + 1 + RANKS] == [f"  rank {r}: {' '.join(row)}" for r, row in enumerate(rows)]
        for r, row in enumerate(rows):  # the cells are the passes, each COST units long
            cells = [c for c in row if c != "--"]
            assert len(cells) == sum(program.COST[k] for k, _, _ in orders[r])


def _one_stage_1f1b(m: int) -> list[list[tuple[str, int, int]]]:
    """1F1B's order with one stage per rank (the previous section's test checks torch runs
    it): stage s runs (ranks - s) forward passes, then alternates, then drains."""
    orders = []
    for stage in range(RANKS):
        warmup = min(RANKS - stage, m)
        order = [("F", stage, i) for i in range(warmup)]
        for i in range(m):
            order.append(("B", stage, i))
            if warmup + i < m:
                order.append(("F", stage, warmup + i))
        orders.append(order)
    return orders


def test_interleaving_halves_the_idle_time_once_there_are_enough_micro_batches(job):
    # the baseline: 1F1B on the same four layers, two per rank as one stage, on the same clock
    *baseline_idle, baseline_span = _replay(_one_stage_1f1b(4), stages=RANKS, layers=2)
    assert (baseline_idle[0], baseline_span) == (6, 30)
    assert Fraction(baseline_idle[0], baseline_span) == Fraction(RANKS - 1, 4 + RANKS - 1)
    printed = _printed(job)
    idle = {m: int(printed[(name, m)]["idle"]) for name, m in RUNS if name == "ScheduleInterleaved1F1B"}
    assert idle[1] == baseline_idle[0]  # one micro-batch: nothing to interleave
    assert all(idle[m] == baseline_idle[0] // 2 for m in idle if m >= RANKS)  # two stages per rank: half
    m4 = printed[("ScheduleInterleaved1F1B", 4)]
    assert Fraction(m4["bubble"]) == Fraction(1, 9)
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert (f"is idle for (p − 1) × 6 = {baseline_idle[0]} units of {baseline_span}: a bubble of "
            f"{Fraction(baseline_idle[0], baseline_span)}") in text


def test_a_round_longer_than_p_runs_every_forward_pass_first(job):
    i = RUNS.index(("ScheduleInterleaved1F1B", 3))
    order = _passes(job, 0)[i]
    assert [kind for kind, _, _ in order[:6]] == ["F"] * 6  # all of rank 0's forward passes
    assert int(_printed(job)[("ScheduleInterleaved1F1B", 3)]["flight"]) == 6


def test_zero_bubble_splits_the_backward_pass_and_leaves_one_unit_idle(job):
    i = RUNS.index(("ScheduleInterleavedZeroBubble", 4))
    for rank in range(RANKS):
        order = _passes(job, rank)[i]
        for kind, stage, micro in order:
            if kind == "W":  # a weight gradient comes after its input gradient
                assert order.index(("I", stage, micro)) < order.index((kind, stage, micro))
    line = _printed(job)[("ScheduleInterleavedZeroBubble", 4)]
    assert (int(line["idle"]), int(line["span"])) == (1, 25)


def test_interleaving_keeps_more_layers_of_activations_in_flight(job):
    flight = int(_printed(job)[("ScheduleInterleaved1F1B", 4)]["flight"])
    assert flight == 5  # forward passes of one layer each
    baseline = program.most_in_flight(_one_stage_1f1b(4)[0])
    assert baseline == RANKS  # forward passes of two layers each
    assert flight * 1 > baseline * 2


def _by_stage(held: dict[int, list[torch.Tensor]]) -> list[torch.Tensor]:
    """Per-rank lists of tensors in each rank's optimizer order (its first stage's
    parameters, then its second's) put in the unsplit model's order: stage 0 (rank 0),
    1 (rank 1), 2 (rank 0), 3 (rank 1)."""
    sizes = [len(list(program.build_stage(i).parameters())) for i in range(program.STAGES)]
    ordered = []
    for index in range(program.STAGES):
        rank, local = index % RANKS, index // RANKS
        offset = sum(sizes[rank + RANKS * j] for j in range(local))
        ordered += held[rank][offset:offset + sizes[index]]
    return ordered


def _unsplit(job: JobResult, step: int) -> nn.Sequential:
    """The whole model in one process, with the weights the four stages had at ``step``."""
    model = nn.Sequential(*(program.build_stage(i) for i in range(program.STAGES)))
    return _load(model, _by_stage({r: job.records[r]["extra"]["steps"][step]["params"] for r in range(RANKS)}))


def test_every_step_computes_the_unsplit_model_s_loss_and_gradients(job):
    for step, (name, m) in enumerate(RUNS):
        x, y = program.make_batch(step)
        model = _unsplit(job, step)
        loss = nn.MSELoss()(model(x), y)
        recorded = job.records[1]["extra"]["pp_multi_steps"][step]
        assert len(recorded["losses"]) == m
        torch.testing.assert_close(torch.stack(recorded["losses"]).mean(), loss.detach(), **TOL)
        grads = _by_stage({r: job.records[r]["extra"]["steps"][step]["grads"] for r in range(RANKS)})
        _assert_all_close(grads, _grads(model, loss))


def test_the_page_s_numbers_are_the_run_s(job):
    # the output itself is shown under the launch command, from the record (bare_run_test)
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    printed = _printed(job)
    m4 = printed[("ScheduleInterleaved1F1B", 4)]
    assert f"leaves rank 0 idle for {m4['idle']} of {m4['span']} units: a bubble of {m4['bubble']}" in text
    m1 = printed[("ScheduleInterleaved1F1B", 1)]
    assert f"{m1['idle']} idle units of {m1['span']}, as with one stage per rank" in text
    zb = printed[("ScheduleInterleavedZeroBubble", 4)]
    assert f"rank 0 is idle for {zb['idle']} unit of {zb['span']}" in text
    assert f"up to {m4['flight']} forward passes of one layer" in text


def test_the_quiz_s_answer_is_the_run_s(job):
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    quiz = text[text.index("`pipeline_interleaved.py` runs `ScheduleInterleaved1F1B` on 2 ranks"):]
    quiz = quiz[:quiz.index("///")]
    printed = _printed(job)
    idle = {m: int(printed[(name, m)]["idle"]) for name, m in RUNS if name == "ScheduleInterleaved1F1B"}
    enough = sorted(m for m in idle if m >= RANKS)
    assert "- [x] Half as much once there are at least 2 micro-batches, as many as ranks, and the same with 1." in quiz
    assert f"{idle[enough[0]]} units instead of {idle[1]} on the program's clock" in quiz
    assert f"with {', '.join(map(str, enough[:-1]))} or {enough[-1]} micro-batches" in quiz
    assert f"rank 0 waits {idle[1]} units, as with one stage per rank" in quiz


test_bare_run = bare_run_test(PROGRAM, stdout=(r"^ScheduleInterleaved1F1B, m=4: bubble 1/9 ",
                                               r"^ScheduleInterleavedZeroBubble, m=4: bubble 1/25 "))
