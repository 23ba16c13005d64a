"""Gradient accumulation with DistributedDataParallel: all-reduce once per optimizer step.

Each optimizer step adds up the gradients of ACCUM_STEPS micro-batches; inside
``no_sync()`` DDP skips the all-reduce, so only the last micro-batch's backward
communicates. A communication hook counts the all-reduces.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 accumulate.py
--8<-- [end:launch]
time-limit: 120 s
"""
import contextlib
import gc
import os
import sys

import torch
import torch.distributed as dist
# imported before any process group exists: lesson 4, "End every worker cleanly"
import torch.distributed.nn  # noqa: F401
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

ACCUM_STEPS = 4  # micro-batches per optimizer step
MICRO_BATCH = 8  # samples per micro-batch and process
STEPS = 2  # optimizer steps
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


def make_dataset(n_samples: int = 128) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(n_samples, 8, generator=generator)
    y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(n_samples, 1, generator=generator)
    return TensorDataset(x, y)


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))


def main() -> None:
    device = setup()
    rank = dist.get_rank()
    dataset = make_dataset()
    loader = DataLoader(
        dataset, batch_size=MICRO_BATCH, sampler=DistributedSampler(dataset, shuffle=False)
    )
    torch.manual_seed(0)
    ddp_model = DDP(
        make_model().to(device), device_ids=[device.index] if device.type == "cuda" else None
    )
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=LR)
    loss_fn = nn.MSELoss()

    all_reduces = 0

    def counting_allreduce(state, bucket):
        nonlocal all_reduces
        all_reduces += 1
        return default_hooks.allreduce_hook(state, bucket)

    ddp_model.register_comm_hook(None, counting_allreduce)

    # --8<-- [start:accumulate]
    micro_batches = iter(loader)
    for step in range(STEPS):
        optimizer.zero_grad()
        for i in range(ACCUM_STEPS):
            x, y = next(micro_batches)
            x, y = x.to(device), y.to(device)
            last = i == ACCUM_STEPS - 1
            # forward and backward inside no_sync(): gradients only add up locally
            with contextlib.nullcontext() if last else ddp_model.no_sync():
                loss = loss_fn(ddp_model(x), y) / ACCUM_STEPS  # the mean over all micro-batches
                loss.backward()
        optimizer.step()
        if rank == 0:
            print(f"step {step}: {ACCUM_STEPS} backward passes, {all_reduces} all-reduce")
        all_reduces = 0
    # --8<-- [end:accumulate]

    del ddp_model  # the DDP model holds the process group
    gc.collect()  # DDP sits in reference cycles: free it now, before destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
