"""Train with DistributedDataParallel when ranks have different numbers of batches.

Each rank reads its own shard of the data, and the shards differ in size: rank 0 has
3 batches, rank 1 has 4. ``Join`` lets the rank that runs out first shadow the other
ranks' collectives until every rank has finished.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 uneven_inputs.py
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
from torch.distributed.algorithms.join import Join
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

BATCH_SIZE = 16
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


def make_shard(rank: int) -> TensorDataset:
    """This rank's own part of the data; shards rarely hold the same number of samples."""
    n_samples = 48 + 16 * rank  # 3 batches on rank 0, 4 on rank 1
    generator = torch.Generator().manual_seed(rank)
    x = torch.randn(n_samples, 8, generator=generator)
    return TensorDataset(x, x.sum(dim=1, keepdim=True))


def main() -> None:
    device = setup()
    rank, world_size = dist.get_rank(), dist.get_world_size()
    loader = DataLoader(make_shard(rank), batch_size=BATCH_SIZE)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
    ddp_model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=LR)
    loss_fn = nn.MSELoss()

    # --8<-- [start:train]
    with Join([ddp_model]):  # a rank that runs out of batches shadows the others' all-reduces
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss_fn(ddp_model(x), y).backward()
            optimizer.step()
    if rank == 0:
        print(f"rank 0: done with its {len(loader)} batches", flush=True)
    batches = [None] * world_size
    dist.all_gather_object(batches, len(loader))  # how many batches every rank trained on
    if rank == 0:
        print(f"batches per rank: {batches}")
    # --8<-- [end:train]

    del ddp_model  # the DDP model holds the process group
    gc.collect()  # DDP sits in reference cycles: free it now, before destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
