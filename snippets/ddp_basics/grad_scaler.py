"""float16 autocast with a GradScaler under DistributedDataParallel.

The scaler multiplies the loss before backward so that small float16 gradients do not
round to zero, unscales the gradients before the optimizer step, and skips any step
whose gradients hold an inf or NaN. Rank 0 prints each step's scale and whether the
step was applied.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 grad_scaler.py
--8<-- [end:launch]
time-limit: 120 s
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

STEPS = 4
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


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))


def main() -> None:
    device = setup()
    rank = dist.get_rank()
    torch.manual_seed(0)
    ddp_model = DDP(
        make_model().to(device), device_ids=[device.index] if device.type == "cuda" else None
    )
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=LR)
    loss_fn = nn.MSELoss()
    generator = torch.Generator().manual_seed(rank)

    # --8<-- [start:scaler]
    scaler = torch.amp.GradScaler(device.type)  # starts at a scale of 2**16
    for step in range(STEPS):
        x = torch.randn(32, 16, generator=generator).to(device)
        y = x.sum(dim=1, keepdim=True)
        optimizer.zero_grad()
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = loss_fn(ddp_model(x), y)
        scaler.scale(loss).backward()  # the gradients of loss * scale, all-reduced by DDP
        scaler.step(optimizer)  # unscales them; skips the step if any is inf or NaN
        scale = scaler.get_scale()
        scaler.update()  # halves the scale after a skipped step
        skipped = scaler.get_scale() < scale
        if rank == 0:
            print(f"step {step}: scale {scale:.0f}, {'skipped' if skipped else 'applied'}")
    # --8<-- [end:scaler]

    del ddp_model  # the DDP model holds the process group
    gc.collect()  # DDP sits in reference cycles: free it now, before destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
