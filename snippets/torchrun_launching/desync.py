"""Ranks that call different collectives, caught by TORCH_DISTRIBUTED_DEBUG=DETAIL.

The data is split by hand into unequal shards, so rank 0 trains one batch more than rank 1:
it calls all_reduce for that batch while rank 1 has gone on to all_gather. The lesson
docs/torchrun-launching.md shows this program with DETAIL on its launch line; the test in
tests/snippets/test_torchrun_launching/test_desync.py reads the error each rank raises.

--8<-- [start:launch]
TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun --standalone --nproc-per-node=2 desync.py
--8<-- [end:launch]
time-limit: 120 s
outcome: fails
"""
import os
import sys

import torch
import torch.distributed as dist
from torch import nn


def choose_device(local_rank: int, local_world_size: int, gpus: int) -> tuple[torch.device, str]:
    """NCCL needs a GPU of its own for every process on the node; otherwise the CPU and gloo."""
    if gpus >= local_world_size:
        return torch.device("cuda", local_rank), "nccl"
    return torch.device("cpu"), "gloo"


def setup() -> torch.device:
    local_rank = int(os.environ["LOCAL_RANK"])  # set by torchrun
    local_world_size = int(os.environ["LOCAL_WORLD_SIZE"])  # processes on this node
    gpus = torch.cuda.device_count()
    device, backend = choose_device(local_rank, local_world_size, gpus)
    if device.type == "cuda":
        torch.cuda.set_device(device)
        # bound to this GPU: NCCL's communicator is made now
        dist.init_process_group(backend, device_id=device)
    else:
        if gpus and local_rank == 0:  # GPUs, but fewer than processes
            print(
                f"{gpus} GPU(s) for {local_world_size} processes: running on CPU with gloo",
                file=sys.stderr,
            )
        dist.init_process_group(backend)
    return device


def main() -> None:
    device = setup()
    rank, world_size = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(0)
    model = nn.Linear(8, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    # --8<-- [start:bug]
    batches = torch.randn(7, 16, 8, generator=torch.Generator().manual_seed(0))
    mine = torch.tensor_split(batches, world_size)[rank]  # 7 batches: 4 on rank 0, 3 on rank 1
    for x in mine:
        optimizer.zero_grad()
        model(x.to(device)).pow(2).mean().backward()
        for p in model.parameters():  # average the gradients by hand
            dist.all_reduce(p.grad)
            p.grad /= world_size
        optimizer.step()
    print(f"rank {rank}: trained on {len(mine)} batches", flush=True)
    counts = [torch.zeros(1, dtype=torch.long, device=device) for _ in range(world_size)]
    dist.all_gather(counts, torch.tensor([len(mine)], device=device))
    # --8<-- [end:bug]
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
