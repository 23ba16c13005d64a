"""snippets/data_vs_model_parallelism/pipeline_schedules.py, run exactly as docs/data-vs-model-parallelism.md says."""
from __future__ import annotations

import functools
from fractions import Fraction

import pytest
import torch
from torch import nn
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, TOL, _assert_all_close, _grads, _lines, _load, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("data_vs_model_parallelism/pipeline_schedules.py")]


SCHED = FOLDER / "pipeline_schedules.py"
sched = import_program(SCHED)
STAGES = 2
M = sched.MICRO_BATCHES
SCHEDULES = ("ScheduleGPipe", "Schedule1F1B")


@pytest.fixture(scope="module")
def sched_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(SCHED, tmp_path_factory, pytestconfig, exact_world_size=STAGES,
                plugins=("record_data_vs_model_parallelism_pipelining",))


def _unsplit(job, step: int) -> nn.Sequential:
    """The whole model in one process, with the weights both stages had at ``step``."""
    model = nn.Sequential(*sched.build_stage(0), *sched.build_stage(1))
    return _load(model, [v for r in range(STAGES) for v in job.records[r]["extra"]["steps"][step]["params"]])


def _ran(job, rank: int) -> list[list[str]]:
    """What each schedule step ran on one rank, as the harness saw the stage's calls."""
    actions = job.records[rank]["extra"]["pp_actions"]
    assert len(actions) == len(SCHEDULES) * 2 * M
    return [actions[i * 2 * M:(i + 1) * 2 * M] for i in range(len(SCHEDULES))]


def _replay(orders: list[list[str]]) -> list[list[str | None]]:
    """The test's own clock, written differently from the program's: each action starts
    one unit after the later of its stage's previous action and the action it needs on
    the neighbouring stage (a forward: the same forward on stage s-1; a backward: the
    same backward on stage s+1). Returns each stage's row, None where it waits."""

    @functools.cache
    def start(s: int, k: int) -> int:
        action = orders[s][k]
        t = start(s, k - 1) + 1 if k else 0
        peer = s - 1 if action[0] == "F" else s + 1
        if 0 <= peer < len(orders):
            t = max(t, start(peer, orders[peer].index(action)) + 1)
        return t

    times = {(s, k): start(s, k) for s in range(len(orders)) for k in range(len(orders[s]))}
    rows = [[None] * (max(times.values()) + 1) for _ in orders]
    for (s, k), t in times.items():
        rows[s][t] = orders[s][k]
    return rows


class TestPipelineSchedules:
    def test_each_rank_holds_only_its_own_stage(self, sched_job):
        for rank in range(STAGES):
            held = [tuple(p.shape) for p in sched_job.records[rank]["extra"]["steps"][0]["params"]]
            assert held == [tuple(p.shape) for p in sched.build_stage(rank).parameters()]

    def test_both_schedules_ran_a_step_on_both_stages(self, sched_job):
        for rank in range(STAGES):
            steps = sched_job.records[rank]["extra"]["pp_steps"]
            assert [s["schedule"] for s in steps] == list(SCHEDULES)
            assert all(s["n_microbatches"] == M for s in steps)
            assert len(sched_job.records[rank]["extra"]["steps"]) == len(SCHEDULES)  # one optimizer step each

    def test_loss_equals_the_unsplit_models_full_batch_loss(self, sched_job):
        steps = sched_job.records[1]["extra"]["pp_steps"]
        assert all(s["losses"] is None for s in sched_job.records[0]["extra"]["pp_steps"])  # the last stage has the losses
        printed = [l for l in _lines(sched_job, 1)]
        assert len(printed) == len(SCHEDULES)
        for step, (record, line) in enumerate(zip(steps, printed)):
            x, y = sched.make_batch(step)
            assert torch.equal(record["target"], y)
            assert len(record["losses"]) == M
            expected = nn.MSELoss()(_unsplit(sched_job, step)(x), y)
            torch.testing.assert_close(torch.stack(record["losses"]).mean(), expected.detach(), **TOL)
            assert line == f"{record['schedule']}: loss {expected.item():.4f}"

    def test_gradients_equal_the_unsplit_models(self, sched_job):
        for step in range(len(SCHEDULES)):
            x, y = sched.make_batch(step)
            model = _unsplit(sched_job, step)
            expected = _grads(model, nn.MSELoss()(model(x), y))
            recorded = [g for r in range(STAGES) for g in sched_job.records[r]["extra"]["steps"][step]["grads"]]
            _assert_all_close(recorded, expected)

    def test_gpipe_runs_all_forwards_then_all_backwards(self, sched_job):
        for rank in range(STAGES):
            gpipe, _ = _ran(sched_job, rank)
            assert gpipe == [f"F{i}" for i in range(M)] + [f"B{i}" for i in range(M)]

    def test_1f1b_starts_backward_passes_early(self, sched_job):
        # stage s runs (stages - s) forwards first, then alternates, then drains its backwards
        for rank in range(STAGES):
            _, one_f_one_b = _ran(sched_job, rank)
            warmup = STAGES - rank
            assert one_f_one_b[:warmup] == [f"F{i}" for i in range(warmup)]
            assert one_f_one_b[warmup] == "B0"
            assert sorted(one_f_one_b) == sorted(f"{k}{i}" for k in "FB" for i in range(M))

    def test_printed_timeline_is_what_the_stages_ran(self, sched_job):
        printed = _lines(sched_job, 0)
        for i, name in enumerate(SCHEDULES):
            orders = [_ran(sched_job, r)[i] for r in range(STAGES)]
            rows = _replay(orders)
            for s, row in enumerate(rows):
                assert f"{name} stage {s}: " + " ".join(f"{a or '--':>2}" for a in row) in printed

    def test_bubble_is_the_same_for_both_schedules_and_matches_the_formula(self, sched_job):
        printed = _lines(sched_job, 0)
        formula = Fraction(STAGES - 1, M + STAGES - 1)
        assert formula == Fraction(1, 5)  # what the page states for 2 stages and 4 micro-batches
        for i, name in enumerate(SCHEDULES):
            rows = _replay([_ran(sched_job, r)[i] for r in range(STAGES)])
            for row in rows:
                assert Fraction(row.count(None), len(row)) == formula
            in_flight = {"ScheduleGPipe": M, "Schedule1F1B": STAGES}[name]
            assert (f"{name}: bubble {formula} of each stage's time, "
                    f"at most {in_flight} micro-batches in flight on stage 0") in printed

    def test_activations_in_flight(self, sched_job):
        gpipe, one_f_one_b = _ran(sched_job, 0)
        assert sched.most_in_flight(gpipe) == M
        assert sched.most_in_flight(one_f_one_b) == STAGES
        # the counting itself: forwards minus backwards, at most
        running = [sum(1 if a[0] == "F" else -1 for a in one_f_one_b[:k + 1]) for k in range(len(one_f_one_b))]
        assert max(running) == STAGES


test_bare_run = bare_run_test(SCHED, reference="sched_job", stdout=(r"^Schedule1F1B: bubble 1/5 of each stage's time",))
