"""unused_params.py without find_unused_parameters=True: the second forward pass fails.

The first step uses one head; the other head's parameters never get a gradient, so DDP
cannot finish that step's gradient reduction. It says so at the start of the next
forward pass, on every rank; TORCH_DISTRIBUTED_DEBUG=INFO makes the error name the
parameters.

--8<-- [start:launch]
TORCH_DISTRIBUTED_DEBUG=INFO torchrun --standalone --nproc-per-node=2 unused_params_error.py
--8<-- [end:launch]
time-limit: 120 s
outcome: fails
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


# --8<-- [start:model]
class TwoTaskModel(nn.Module):
    """A shared body and one head per task; a forward pass uses one head."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 32), nn.ReLU())
        self.heads = nn.ModuleList([nn.Linear(32, 1), nn.Linear(32, 1)])

    def forward(self, x: torch.Tensor, task: int) -> torch.Tensor:
        return self.heads[task](self.body(x))
# --8<-- [end:model]


def main() -> None:
    device = setup()
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = TwoTaskModel().to(device)
    # --8<-- [start:wrap]
    ddp_model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    # --8<-- [end:wrap]
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=LR)
    loss_fn = nn.MSELoss()
    generator = torch.Generator().manual_seed(rank)

    # --8<-- [start:train]
    for step in range(STEPS):
        task = step % 2  # the same task on every rank
        x = torch.randn(16, 8, generator=generator).to(device)
        y = x.sum(dim=1, keepdim=True) * (1 if task == 0 else -1)
        optimizer.zero_grad()
        loss_fn(ddp_model(x, task), y).backward()
        optimizer.step()
        if rank == 0:
            idle = [name for name, p in model.named_parameters() if p.grad is None]
            print(f"step {step}: task {task}, no gradient for {', '.join(idle)}", flush=True)
    # --8<-- [end:train]

    del ddp_model  # the DDP model holds the process group
    gc.collect()  # DDP sits in reference cycles: free it now, before destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
