"""Mixed precision with DistributedDataParallel: autocast to bfloat16, weights stay fp32.

The forward pass runs under ``torch.autocast`` (on CUDA where present, else on the
CPU); the program prints which dtypes each part of a training step had.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 mixed_precision.py
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

STEPS = 3
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
    if (
        device.type == "cuda"
        and not torch.cuda.is_bf16_supported(including_emulation=False)
        and rank == 0
    ):
        print(
            "this GPU emulates bfloat16 (it predates Ampere), slowly: "
            "float16 with a GradScaler suits it",
            file=sys.stderr,
        )

    # --8<-- [start:autocast]
    for step in range(STEPS):
        x = torch.randn(32, 16, generator=generator).to(device)
        y = x.sum(dim=1, keepdim=True)
        optimizer.zero_grad()
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
            output = ddp_model(x)  # the Linear layers compute in bfloat16
            loss = loss_fn(output, y)  # mse_loss is on autocast's float32 list
        loss.backward()  # outside autocast: backward runs in the forward's dtypes
        optimizer.step()
        if rank == 0:
            print(f"step {step}: loss {loss.item():.4f}")
    # --8<-- [end:autocast]

    # --8<-- [start:dtypes]
    weight = ddp_model.module[0].weight
    if rank == 0:
        print(f"output {output.dtype}, loss {loss.dtype}, "
              f"weights {weight.dtype}, gradients {weight.grad.dtype}")
    # --8<-- [end:dtypes]

    del ddp_model  # the DDP model holds the process group
    gc.collect()  # DDP sits in reference cycles: free it now, before destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
