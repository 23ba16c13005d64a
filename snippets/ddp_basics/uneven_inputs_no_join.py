"""Break it: uneven_inputs.py without Join. Rank 0 runs out of batches first and hangs.

The same program as uneven_inputs.py with the ``with Join([ddp_model]):`` line deleted,
pinned to gloo on the CPU (on NCCL the hang shows elsewhere; the page says where).
Rank 0 finishes its 3 batches and waits in ``all_gather_object``; rank 1 waits in the
all-reduce of its 4th backward pass, which rank 0 never joins. Neither returns: the job
hangs until it is stopped.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 uneven_inputs_no_join.py
--8<-- [end:launch]
time-limit: 60 s
outcome: hangs
blocked-in: rank 0: dist.all_gather_object(batches, len(loader))
blocked-in: rank 1: loss_fn(ddp_model(x), y).backward()
"""
import gc

import torch
import torch.distributed as dist
# imported before any process group exists: lesson 4, "End every worker cleanly"
import torch.distributed.nn  # noqa: F401
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

BATCH_SIZE = 16
LR = 0.05


def setup() -> torch.device:
    # gloo on the CPU, GPUs or not: this program teaches a missing collective, and NCCL would
    # show it elsewhere (its all-reduce does not block Python; see the page)
    dist.init_process_group(backend="gloo")
    return torch.device("cpu")


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
    ddp_model = DDP(model)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=LR)
    loss_fn = nn.MSELoss()

    # --8<-- [start:train]
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
