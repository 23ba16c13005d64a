"""snippets/syncbn_and_sharding/fsdp_train.py, run exactly as docs/syncbn-and-sharding.md says."""
from __future__ import annotations

import re
import pytest
import torch
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, TOL, _adam_in_one_process, _expected_rows, _files_saved, _ops, _padded_numel, _passes, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/fsdp_train.py")]


FSDP = FOLDER / "fsdp_train.py"
fsdp = import_program(FSDP)


@pytest.fixture(scope="module")
def fsdp_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(FSDP, tmp_path_factory, pytestconfig)


class TestFullyShard:
    def test_each_rank_stores_its_dim0_shard_of_every_parameter(self, fsdp_job):
        ws = fsdp_job.world_size
        shapes = [tuple(p.shape) for p in fsdp.make_model().parameters()]
        for rank in range(ws):
            steps = fsdp_job.records[rank]["extra"]["sharded_steps"]
            assert steps, f"rank {rank} never stepped an optimizer over sharded (DTensor) parameters"
            per_rank = -(-len(fsdp.make_dataset()) // ws)  # DistributedSampler pads to equal shares
            assert len(steps) == fsdp.EPOCHS * -(-per_rank // fsdp.BATCH_SIZE)
            params = steps[-1]
            assert [p["shape"] for p in params] == shapes
            for p in params:
                assert p["local_shape"] == (_expected_rows(p["shape"][0], ws, rank), *p["shape"][1:])

    def test_rank_0_stores_the_whole_one_row_last_layer_and_rank_1_none_of_it(self, fsdp_job):
        last = [fsdp_job.records[r]["extra"]["sharded_steps"][-1][-1] for r in range(fsdp_job.world_size)]
        assert [p["shape"] for p in last] == [(1,)] * fsdp_job.world_size  # its bias; its weight is 1 x 64
        weights = [fsdp_job.records[r]["extra"]["sharded_steps"][-1][-2] for r in range(fsdp_job.world_size)]
        assert [p["local_shape"] for p in weights] == [(1, 64), (0, 64)]
        assert [p["local_shape"] for p in last] == [(1,), (0,)]

    def test_gradients_and_optimizer_state_are_sharded_the_same_way(self, fsdp_job):
        for rank in range(fsdp_job.world_size):
            for p in fsdp_job.records[rank]["extra"]["sharded_steps"][-1]:
                assert p["grad_local_shape"] == p["local_shape"]
                assert p["state"] == {"exp_avg": p["local_shape"], "exp_avg_sq": p["local_shape"]}

    def test_each_rank_holds_about_its_share_of_the_parameter_bytes(self, fsdp_job):
        ws = fsdp_job.world_size
        held = []
        for rank in range(ws):
            params = fsdp_job.records[rank]["extra"]["sharded_steps"][-1]
            local = sum(torch.Size(p["local_shape"]).numel() * p["element_size"] for p in params)
            total = sum(torch.Size(p["shape"]).numel() * p["element_size"] for p in params)
            printed = re.search(r"rank (\d+) holds ([\d,]+) of ([\d,]+) parameter bytes", fsdp_job.stdout(rank))
            assert printed and int(printed[1]) == rank
            assert (int(printed[2].replace(",", "")), int(printed[3].replace(",", ""))) == (local, total)
            # off from an even split by at most one row of each parameter
            slack = sum(torch.Size(p["shape"][1:]).numel() * p["element_size"] for p in params)
            assert abs(local - total / ws) <= slack
            held.append(local)
        assert sum(held) == total

    def test_gathered_state_matches_the_same_training_in_one_process(self, fsdp_job):
        assert _files_saved(fsdp_job, 0) == [fsdp.CHECKPOINT]
        assert all(_files_saved(fsdp_job, r) == [] for r in range(1, fsdp_job.world_size))
        saved = torch.load(fsdp_job.workdir / fsdp.CHECKPOINT, weights_only=True)

        model, _, initial = _adam_in_one_process(fsdp, fsdp_job)
        assert saved.keys() == model.state_dict().keys()
        for name, value in model.state_dict().items():
            assert saved[name].shape == value.shape  # full, not a shard
            torch.testing.assert_close(saved[name], value, **TOL)
            assert not torch.allclose(saved[name], initial[name], **TOL), f"{name} did not train"


class TestGatherAndReduceScatter:
    """One all-gather per unit just before its forward, again for its backward (but the
    root's, which keeps its weights), one reduce-scatter per unit in backward."""

    def _units(self) -> list[list[tuple[int, ...]]]:
        """The parameter shapes of each unit, in forward order: the root (the last Linear) first, then the blocks."""
        model = fsdp.make_model()
        blocks = [[tuple(p.shape) for p in block.parameters()] for block in model[:-1]]
        return [[tuple(p.shape) for p in model[-1].parameters()], *blocks]

    def test_every_training_step_is_one_forward_and_one_backward_pass(self, fsdp_job):
        steps = len(fsdp_job.records[0]["extra"]["sharded_steps"])
        for rank in range(fsdp_job.world_size):
            assert len(_passes(fsdp_job.records[rank]["extra"]["events"])) == steps

    def test_each_unit_is_all_gathered_just_before_its_forward(self, fsdp_job):
        ws, units = fsdp_job.world_size, self._units()
        for rank in range(ws):
            for n, one in enumerate(_passes(fsdp_job.records[rank]["extra"]["events"])):
                forward = one["forward"]
                starts = [i for i, e in enumerate(forward) if e["op"] == "forward"]
                assert [forward[i]["unit"] for i in starts] == list(range(len(units))), f"rank {rank}, pass {n}"
                for unit, i in enumerate(starts):  # the next collective after a unit starts is its own all-gather
                    gather = next(e for e in forward[i + 1:] if e["op"] != "linear")
                    assert gather["op"] == "all_gather", f"rank {rank}, pass {n}, unit {unit}: {gather}"
                    assert gather["numel"] == sum(_padded_numel(shape, ws) for shape in units[unit])
                assert len(_ops(forward, "all_gather")) == len(units)
                assert not _ops(forward, "reduce_scatter")

    def test_backward_gathers_the_blocks_again_and_reduce_scatters_every_unit(self, fsdp_job):
        ws, units = fsdp_job.world_size, self._units()
        for rank in range(ws):
            for n, one in enumerate(_passes(fsdp_job.records[rank]["extra"]["events"])):
                backward = one["backward"]
                gathered = sorted(e["numel"] for e in _ops(backward, "all_gather"))
                # every block again; the root unit kept its full weights (reshard_after_forward=False for the root)
                assert gathered == sorted(sum(_padded_numel(s, ws) for s in unit) for unit in units[1:]), f"rank {rank}, pass {n}"
                scattered = sorted(e["numel"] for e in _ops(backward, "reduce_scatter"))
                assert scattered == sorted(ws * sum(_padded_numel(s, ws) for s in unit) for unit in units)
                assert all(e["dtype"] == "float32" for e in _ops(backward, "reduce_scatter"))


    def test_backward_gathers_the_next_unit_before_reducing_the_current_one(self, fsdp_job):
        # FSDP2 prefetches one unit ahead in backward by default
        for rank in range(fsdp_job.world_size):
            for n, one in enumerate(_passes(fsdp_job.records[rank]["extra"]["events"])):
                seq = [e["op"] for e in one["backward"] if e["op"] in ("all_gather", "reduce_scatter")]
                gathers = seq.count("all_gather")
                scatters = [i for i, op in enumerate(seq) if op == "reduce_scatter"]
                for k, i in enumerate(scatters):
                    assert seq[:i].count("all_gather") >= min(k + 2, gathers), f"rank {rank}, pass {n}: {seq}"


class TestFullStateDict:
    def test_with_cpu_offload_every_rank_gathers_each_full_tensor_and_only_rank_0_keeps_them(self, fsdp_job):
        shapes = {n: tuple(p.shape) for n, p in fsdp.make_model().state_dict().items()}
        for rank in range(fsdp_job.world_size):
            calls = fsdp_job.records[rank]["extra"]["model_state_dicts"]
            assert [c["options"]["full_state_dict"] and c["options"]["cpu_offload"] for c in calls] == [True]
            # every rank, not only rank 0, takes part in gathering each tensor in full, one
            # tensor after another (an all-gather each), from its own shard
            gathered = calls[0]["gathered"]
            assert [g["shape"] for g in gathered] == list(shapes.values()), f"rank {rank}"
            assert all(set(g["placements"]) == {"Replicate"} for g in gathered)
            assert any(g["local_shape"] != g["shape"] for g in gathered)  # it started from shards
            tensors = calls[0]["tensors"]
            if rank == 0:
                assert {k: t["shape"] for k, t in tensors.items()} == shapes  # full, not shards
                assert all(t["device"] == "cpu" and not t["dtensor"] for t in tensors.values())
            else:
                assert tensors == {}, f"rank {rank} kept tensors although cpu_offload=True keeps them on rank 0"


test_bare_run = bare_run_test(FSDP, reference="fsdp_job")
