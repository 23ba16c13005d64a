"""Break it: save a sharded checkpoint from rank 0 alone, the way torch.save is used.

A "break it" program. The lesson docs/syncbn-and-sharding.md shows it section by
section; the test in tests/snippets/test_syncbn_and_sharding/test_dcp_save_rank0.py runs
exactly the command below and checks that it fails where and how the page says. The
short process-group timeout turns the hang into an error after 10 seconds.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 dcp_save_rank0.py
--8<-- [end:launch]
time-limit: 120 s
outcome: fails
"""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.checkpoint.state_dict import get_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

CHECKPOINT_DIR = "checkpoint"


def setup() -> torch.device:
    timeout = timedelta(seconds=10)  # fail a stuck collective after 10 s, not 30 minutes
    # gloo on the CPU, GPUs or not: this program teaches a collective one rank skips, and on
    # NCCL it would end differently (see the page)
    dist.init_process_group(backend="gloo", timeout=timeout)
    return torch.device("cpu")


def make_model() -> nn.Sequential:
    blocks = [nn.Sequential(nn.Linear(16 if i == 0 else 64, 64), nn.ReLU()) for i in range(3)]
    return nn.Sequential(*blocks, nn.Linear(64, 1))


def main() -> None:
    device = setup()
    rank = dist.get_rank()

    torch.manual_seed(0)
    model = make_model().to(device)
    # setup()'s device (the default is the GPU)
    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    for block in model[:-1]:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

    # --8<-- [start:save]
    model_state, optim_state = get_state_dict(model, optimizer)
    if rank == 0:  # wrong: dcp.save is a collective, every rank must call it
        print("rank 0: saving", flush=True)
        dcp.save({"model": model_state, "optimizer": optim_state}, checkpoint_id=CHECKPOINT_DIR)
    print(f"rank {rank}: waiting at the barrier", flush=True)
    dist.barrier()
    # --8<-- [end:save]

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
