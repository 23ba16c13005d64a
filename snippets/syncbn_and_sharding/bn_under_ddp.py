"""What DDP does with BatchNorm's running statistics: every rank normalizes with the
statistics of its own batch, and at the start of a forward pass, if the one before it ran
with gradients and outside no_sync() (and at the first), DDP copies rank 0's buffers over
everyone else's.

The lesson docs/syncbn-and-sharding.md shows this program section by section. The
launch section below is the single source of how it runs: the page shows it and the
test in tests/snippets/test_syncbn_and_sharding/test_bn_under_ddp.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 bn_under_ddp.py
--8<-- [end:launch]
time-limit: 180 s
"""
import gc
import os
import sys

import torch
import torch.distributed as dist
# imported before any process group exists: lesson 4, "End every worker cleanly"
import torch.distributed.nn  # noqa: F401
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

CHANNELS = 3
BATCH_SIZE = 4  # per process
STEPS = 5
EVAL_BATCHES = 2


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


def make_batch(rank: int, step: int) -> torch.Tensor:
    """Rank 0's images have mean 0, rank 1's mean 3: the ranks see different data."""
    generator = torch.Generator().manual_seed(100 * rank + step)
    return torch.randn(BATCH_SIZE, CHANNELS, 4, 4, generator=generator) * (1 + rank) + 3 * rank


def main() -> None:
    device = setup()
    rank = dist.get_rank()

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.BatchNorm2d(CHANNELS), nn.Flatten(), nn.Linear(CHANNELS * 16, 1)
    ).to(device)
    ddp_model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.01)

    # --8<-- [start:train]
    for step in range(STEPS):
        x = make_batch(rank, step).to(device)
        optimizer.zero_grad()
        ddp_model(x).pow(2).mean().backward()  # BatchNorm uses this rank's batch only
        optimizer.step()
    # --8<-- [end:train]

    # --8<-- [start:evaluate]
    bn = model[0]
    trained = bn.running_mean[0].item()  # updated with this rank's last batch
    ddp_model.eval()
    with torch.no_grad():
        for batch in range(EVAL_BATCHES):
            # rank 0's buffers are copied before the first only
            ddp_model(make_batch(rank, STEPS + batch).to(device))
    print(f"rank {rank}: running mean of channel 0: {trained:.3f} after training, "
          f"{bn.running_mean[0].item():.3f} in evaluation")
    # --8<-- [end:evaluate]

    del ddp_model, optimizer
    gc.collect()  # DDP sits in reference cycles: free it now, before destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
