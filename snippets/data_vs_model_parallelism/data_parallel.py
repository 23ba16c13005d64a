"""Data parallelism with plain collectives: every process holds the whole model, computes
gradients on its share of each batch, and an all-reduce averages the gradients.

The lesson docs/data-vs-model-parallelism.md shows this program section by section.
The launch section below is the single source of how it runs: the page shows it and the test in
tests/snippets/test_data_vs_model_parallelism/test_data_parallel.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 data_parallel.py
--8<-- [end:launch]
time-limit: 120 s
"""
import os
import sys

import torch
import torch.distributed as dist
# imported before any process group exists: lesson 4, "End every worker cleanly"
import torch.distributed.nn  # noqa: F401
from torch import nn

STEPS = 3
GLOBAL_BATCH = 32  # split evenly between the processes
LR = 0.05


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


def make_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(step)  # the same batch on every rank
    x = torch.randn(GLOBAL_BATCH, 8, generator=generator)
    y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(GLOBAL_BATCH, 1, generator=generator)
    return x, y


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))


def main() -> None:
    device = setup()
    rank, world_size = dist.get_rank(), dist.get_world_size()
    # each rank draws different initial weights: only the broadcast makes them equal
    torch.manual_seed(rank)

    # --8<-- [start:replicate]
    model = make_model().to(device)
    with torch.no_grad():
        for p in model.parameters():
            dist.broadcast(p, src=0)  # every replica starts from rank 0's weights
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    loss_fn = nn.MSELoss()
    # --8<-- [end:replicate]

    for step in range(STEPS):
        # --8<-- [start:split]
        x, y = make_batch(step)
        x = x.chunk(world_size)[rank].to(device)  # this rank's share of the batch
        y = y.chunk(world_size)[rank].to(device)
        # --8<-- [end:split]

        # --8<-- [start:average]
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()  # gradients of this rank's share only
        for p in model.parameters():
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad /= world_size  # the sum of the shares' gradients becomes their mean
        optimizer.step()  # the same update on every rank
        # --8<-- [end:average]

        # --8<-- [start:report]
        total = loss.detach().clone()
        dist.all_reduce(total)  # the sum of the shares' mean losses
        if rank == 0:  # one rank prints, so that the ranks' lines do not mix
            print(f"step {step}: loss {total.item() / world_size:.4f}, "
                  f"the mean of {world_size} shares of {len(x)} samples")
        # --8<-- [end:report]

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
