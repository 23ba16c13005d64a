"""Train a tiny regression model with DistributedDataParallel on every process.

The lesson docs/ddp-basics.md shows this program section by section. The launch
section below is the single source of how it runs: the page shows it and the test
in tests/snippets/test_ddp_basics/test_train.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 train.py
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
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

EPOCHS = 3
BATCH_SIZE = 16  # per process: the global batch is BATCH_SIZE * world size
LR = 0.05
CHECKPOINT = "checkpoint.pt"


# --8<-- [start:setup]
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
# --8<-- [end:setup]


# --8<-- [start:data]
def make_dataset(n_samples: int = 256) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)  # same data on every rank
    x = torch.randn(n_samples, 8, generator=generator)
    true_w = torch.randn(8, 1, generator=generator)
    y = x @ true_w + 0.1 * torch.randn(n_samples, 1, generator=generator)
    return TensorDataset(x, y)
# --8<-- [end:data]


# --8<-- [start:model]
class ToyModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)
# --8<-- [end:model]


def main() -> None:
    device = setup()
    rank = dist.get_rank()

    # --8<-- [start:loader]
    dataset = make_dataset()
    sampler = DistributedSampler(dataset, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=BATCH_SIZE, sampler=sampler)
    # --8<-- [end:loader]

    # --8<-- [start:wrap]
    torch.manual_seed(0)  # reproducible runs; DDP makes the replicas equal anyway
    model = ToyModel().to(device)
    ddp_model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=LR)
    loss_fn = nn.MSELoss()
    # --8<-- [end:wrap]

    # --8<-- [start:train]
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)  # a new shuffle each epoch, the same on every rank
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = loss_fn(ddp_model(x), y)
            loss.backward()  # gradients are all-reduced and averaged here
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")
    # --8<-- [end:train]

    # --8<-- [start:save]
    if rank == 0:
        # the inner model: no "module." prefix
        torch.save(ddp_model.module.state_dict(), CHECKPOINT)
    # --8<-- [end:save]

    # --8<-- [start:cleanup]
    del ddp_model  # the DDP model holds the process group
    gc.collect()  # DDP sits in reference cycles: free it now, before destroy_process_group()
    dist.destroy_process_group()
    # --8<-- [end:cleanup]


if __name__ == "__main__":
    main()
