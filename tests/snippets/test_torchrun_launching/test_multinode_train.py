"""snippets/torchrun_launching/multinode_train.py, run exactly as docs/torchrun-launching.md says.

The page's line in two "terminals" of this machine: two torchrun agents, each in its own
copy of the folder as on separate machines, meeting at the c10d rendezvous of the line's
defaults (127.0.0.1:29400). No variable is set that the page does not show.
"""
from __future__ import annotations

import re

import pytest
import torch

from conftest import SNIPPETS, bare_run_test, copy_snippet
from coursekit.runspec import read_spec, torchrun_shape
from torchjob import JobResult, run_nodes
from verification_plugin import effective_line, hardware_env

PROGRAM = SNIPPETS / "torchrun_launching" / "multinode_train.py"
SPEC = read_spec(PROGRAM)
_WHOAMI = re.compile(r"^node (?P<node>\d+), local rank (?P<local>\d+): rank (?P<rank>\d+) of (?P<size>\d+) on ", re.M)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("torchrun_launching/multinode_train.py")]


@pytest.fixture(scope="module")
def nodes(tmp_path_factory, pytestconfig) -> list[JobResult]:
    """The page's line on each of two 'nodes' of this machine."""
    line = effective_line(SPEC, pytestconfig)
    nproc, nnodes = torchrun_shape(line.argv)
    assert nnodes == 2
    assert "--rdzv-backend=c10d" in line.argv
    cwds = [copy_snippet(PROGRAM, tmp_path_factory.mktemp(f"node{i}")).parent for i in range(nnodes)]
    results = run_nodes(line, cwds, SPEC.time_limit_s, hardware=hardware_env(nproc, nnodes),
                        plugins=("record_torchrun_launching",))
    for result in results:
        result.world_size = nproc * nnodes
        result.check_exit()
    return results


def test_world_size_is_every_process_of_every_node(nodes):
    world_size = sum(len(node.ranks) for node in nodes)
    assert world_size == 4 == nodes[0].world_size
    for node in nodes:
        for rank, rec in node.records.items():
            assert rec["world_size"] == world_size
            assert rec["destroyed"], f"rank {rank} never reached destroy_process_group"


def test_global_ranks_are_each_taken_once(nodes):
    per_node = [sorted(node.records) for node in nodes]
    assert all(len(ranks) == 2 for ranks in per_node)
    assert sorted(r for ranks in per_node for r in ranks) == [0, 1, 2, 3]
    printed = sorted(int(m["rank"]) for node in nodes for log in node.ranks for m in _WHOAMI.finditer(log.stdout))
    assert printed == [0, 1, 2, 3]


def test_local_ranks_start_at_zero_on_each_node(nodes):
    for node in nodes:
        assert sorted(rec["local_rank"] for rec in node.records.values()) == [0, 1]


def test_each_node_gets_its_node_rank_and_a_block_of_global_ranks(nodes):
    seen = set()
    for node in nodes:
        lines = [m for log in node.ranks for m in _WHOAMI.finditer(log.stdout)]
        assert len(lines) == 2
        (group,) = {int(m["node"]) for m in lines}  # one node rank per agent
        seen.add(group)
        for m in lines:
            assert int(m["rank"]) == group * 2 + int(m["local"])
            assert int(m["size"]) == 4
    assert seen == {0, 1}


def test_all_four_ranks_end_with_identical_parameters(nodes):
    states = [rec["final_state"] for node in nodes for rec in node.records.values()]
    assert len(states) == 4 and states[0] is not None
    for other in states[1:]:
        assert states[0].keys() == other.keys()
        for name in states[0]:
            assert torch.equal(states[0][name], other[name]), name
    before = nodes[0].records[min(nodes[0].records)]["first_step"]["before"]
    assert any(not torch.equal(before[n], states[0][n]) for n in before)  # it trained


def _built_by(rank: int) -> dict:
    """The weights rank ``rank`` builds before DDP (the program seeds with its rank)."""
    torch.manual_seed(rank)
    return torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).state_dict()


def test_ranks_start_from_different_weights_and_ddp_makes_them_equal(nodes):
    # each rank seeds with its own rank, so equal weights at the first forward can only
    # come from DDP's broadcast of rank 0's weights at construction
    rank0, rank1 = _built_by(0), _built_by(1)
    assert any(not torch.equal(rank0[n], rank1[n]) for n in rank0)
    for node in nodes:
        for rank, rec in node.records.items():
            before = rec["first_step"]["before"]
            assert all(torch.equal(before[n], rank0[n]) for n in rank0), f"rank {rank}"


def test_destroy_process_group_shuts_down_every_group_on_every_rank(nodes):
    for node in nodes:
        for rank, rec in node.records.items():
            teardown = rec["extra"]["teardown"]
            assert rec["destroyed"], f"rank {rank}"
            assert teardown["during_destroy"] == teardown["shutdowns"] == 1, f"rank {rank}: {teardown}"  # one group
            assert teardown["initialized_after"] is False


_DDP_CYCLE_CHECK = """
import gc, weakref
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
gc.disable()
ddp = DDP(nn.Linear(8, 1))
ref = weakref.ref(ddp)
del ddp
print("alive after del:", ref() is not None)
gc.collect()
print("alive after gc.collect():", ref() is not None)
dist.destroy_process_group()
"""


def test_a_ddp_wrapper_is_freed_by_the_cycle_collector_not_when_its_last_name_goes():
    # why returning from train() does not free the model at once (the page's teardown section)
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _DDP_CYCLE_CHECK], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "alive after del: True" in out.stdout
    assert "alive after gc.collect(): False" in out.stdout


_DEFAULTS_CHECK = """
import sys
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

first = sys.argv[1] == "first"
if first:
    import torch.distributed.nn  # what the course's programs do, before any group exists
dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
print("imported before DDP:", "torch.distributed.nn.functional" in sys.modules)
DDP(nn.Linear(8, 1))
import torch.distributed.nn.functional as F
print("default is the group:", F.all_reduce.__defaults__[-1] is dist.group.WORLD)
dist.destroy_process_group()
"""


@pytest.mark.parametrize("when", ["after", "first"])
def test_ddp_imports_torch_distributed_nn_whose_default_argument_holds_the_default_group(when):
    # the page's teardown section: the first DDP(...) imports torch.distributed.nn, whose
    # functions default to group=group.WORLD; imported after init_process_group that is
    # the default group itself, imported first it is None
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _DEFAULTS_CHECK, when], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"imported before DDP: {when == 'first'}" in out.stdout, out.stdout
    assert f"default is the group: {when == 'after'}" in out.stdout, out.stdout


def test_the_agents_log_folder_is_named_after_the_rendezvous_id(nodes):
    # --rdzv-id=${JOB_ID:-lesson4}: the default in two terminals; under Slurm the job sets
    # JOB_ID to $SLURM_JOB_ID, as the page's batch script does
    default = re.search(r"JOB_ID:-(\w+)", SPEC.lines[0].text).group(1)
    for node in nodes:
        rdzv_id = str(node.slurm_job_id) if node.slurm_job_id is not None else default
        (run_dir,) = (node.job_dir / "logs").iterdir()
        assert run_dir.name.startswith(f"{rdzv_id}_"), run_dir.name  # --rdzv-id plus a random suffix
        assert sorted(p.name for p in (run_dir / "attempt_0").iterdir()) == ["0", "1"]


def test_rendezvous_timeouts_the_page_gives():
    # torch/distributed/elastic/rendezvous/dynamic_rendezvous.py: how long agents wait for
    # missing nodes (join, 600 s) and for more nodes once MIN have joined (last call, 30 s)
    from torch.distributed.elastic.rendezvous.dynamic_rendezvous import RendezvousTimeout

    timeout = RendezvousTimeout()
    assert timeout.join.total_seconds() == 600
    assert timeout.last_call.total_seconds() == 30


test_bare_run = bare_run_test(PROGRAM, reference="nodes", stdout=(r"^node [01], local rank [01]: rank 3 of 4 on ", r"^epoch 1: loss "))
