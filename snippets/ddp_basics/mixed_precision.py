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

import torch
import torch.distributed as dist
import torch.distributed.nn  # noqa: F401  imported before any process group exists: lesson 4, "End every worker cleanly"
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS = 3
LR = 0.05


def setup() -> torch.device:
    local_rank = int(os.environ["LOCAL_RANK"])
    if torch.cuda.is_available():
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        dist.init_process_group(backend="nccl")
    else:
        device = torch.device("cpu")
        dist.init_process_group(backend="gloo")
    return device


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))


def main() -> None:
    device = setup()
    rank = dist.get_rank()
    torch.manual_seed(0)
    ddp_model = DDP(make_model().to(device), device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=LR)
    loss_fn = nn.MSELoss()
    generator = torch.Generator().manual_seed(rank)

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
