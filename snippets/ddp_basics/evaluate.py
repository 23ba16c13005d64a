"""Evaluate a model on every rank and combine the metric: all-reduce sums and counts.

The dataset has 101 samples, which does not divide by 2 processes: a
DistributedSampler pads it by repeating samples, which shifts the metric; shards
without padding give the exact value.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 evaluate.py
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
from torch.utils.data import DataLoader, DistributedSampler, Subset, TensorDataset

N_SAMPLES = 101
BATCH_SIZE = 16


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


def make_dataset(n_samples: int = N_SAMPLES) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(n_samples, 8, generator=generator)
    y = x.sum(dim=1, keepdim=True) + torch.randn(n_samples, 1, generator=generator)
    return TensorDataset(x, y)


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))


# --8<-- [start:evaluate]
@torch.no_grad()
def evaluate(model: nn.Module, loader: DataLoader, device: torch.device) -> torch.Tensor:
    """This rank's [sum of the per-sample losses, number of samples]."""
    model.eval()
    total = torch.zeros(2, dtype=torch.float64, device=device)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        total[0] += nn.functional.mse_loss(model(x), y, reduction="sum")
        total[1] += len(x)
    return total


def global_mean(total: torch.Tensor) -> tuple[float, int]:
    """The mean loss over every rank's samples, and how many samples that was."""
    total = total.clone()
    dist.all_reduce(total)  # adds up every rank's sum and count
    return (total[0] / total[1]).item(), int(total[1].item())
# --8<-- [end:evaluate]


def main() -> None:
    device = setup()
    rank, world_size = dist.get_rank(), dist.get_world_size()
    dataset = make_dataset()
    torch.manual_seed(0)
    ddp_model = DDP(
        make_model().to(device), device_ids=[device.index] if device.type == "cuda" else None
    )
    model = ddp_model.module  # evaluation needs no gradient synchronization

    # --8<-- [start:padded]
    sampler = DistributedSampler(dataset, shuffle=False)
    local = evaluate(model, DataLoader(dataset, batch_size=BATCH_SIZE, sampler=sampler), device)
    loss, count = global_mean(local)
    if rank == 0:
        print(f"rank 0 alone: loss {local[0] / local[1]:.4f} over {int(local[1])} samples")
        print(f"padded sampler: loss {loss:.4f} over {count} samples of {len(dataset)}")
    # --8<-- [end:padded]

    # --8<-- [start:exact]
    # every rank-th sample, no padding
    shard = Subset(dataset, range(rank, len(dataset), world_size))
    loss, count = global_mean(evaluate(model, DataLoader(shard, batch_size=BATCH_SIZE), device))
    if rank == 0:
        print(f"unpadded shards: loss {loss:.4f} over {count} samples")
    # --8<-- [end:exact]

    del ddp_model  # the DDP model holds the process group
    gc.collect()  # DDP sits in reference cycles: free it now, before destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
