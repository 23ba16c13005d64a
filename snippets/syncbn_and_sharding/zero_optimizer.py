"""ZeRO stage 1 with ZeroRedundancyOptimizer: DDP as usual, but each process keeps the
Adam state of only its share of the parameters.

The lesson docs/syncbn-and-sharding.md shows this program section by section. The
launch section below is the single source of how it runs: the page shows it and the
test in tests/snippets/test_syncbn_and_sharding/test_zero_optimizer.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 zero_optimizer.py
--8<-- [end:launch]
time-limit: 180 s
"""
import gc
import os
import sys

import torch
import torch.distributed as dist
# imported before any process group exists: lesson 4, "End every worker cleanly"
import torch.distributed.nn  # noqa: F401
from torch import nn
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

EPOCHS = 3
BATCH_SIZE = 16  # per process
LR = 0.01
CHECKPOINT = "checkpoint.pt"


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
    generator = torch.Generator().manual_seed(0)  # same data on every rank
    x = torch.randn(n_samples, 16, generator=generator)
    true_w = torch.randn(16, 1, generator=generator)
    y = x @ true_w + 0.1 * torch.randn(n_samples, 1, generator=generator)
    return TensorDataset(x, y)


def make_model() -> nn.Sequential:
    blocks = [nn.Sequential(nn.Linear(16 if i == 0 else 64, 64), nn.ReLU()) for i in range(3)]
    return nn.Sequential(*blocks, nn.Linear(64, 1))


def main() -> None:
    device = setup()
    rank = dist.get_rank()

    dataset = make_dataset()
    sampler = DistributedSampler(dataset, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=BATCH_SIZE, sampler=sampler)

    # --8<-- [start:wrap]
    torch.manual_seed(0)
    model = make_model().to(device)
    ddp_model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = ZeroRedundancyOptimizer(
        ddp_model.parameters(),
        optimizer_class=torch.optim.Adam,  # the optimizer each rank runs on its share
        lr=LR,
    )
    # --8<-- [end:wrap]

    # --8<-- [start:train]
    loss_fn = nn.MSELoss()
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = loss_fn(ddp_model(x), y)
            loss.backward()  # DDP all-reduces every gradient, as before
            optimizer.step()  # update own share, then broadcast it to the other ranks
        if rank == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")
    # --8<-- [end:train]

    # --8<-- [start:partition]
    mine = [p for group in optimizer.optim.param_groups for p in group["params"]]
    n_params = sum(1 for _ in model.parameters())
    print(f"rank {rank} keeps Adam state for {len(mine)} of {n_params} parameter tensors, "
          f"{sum(p.numel() for p in mine):,} of "
          f"{sum(p.numel() for p in model.parameters()):,} values")
    # --8<-- [end:partition]

    # --8<-- [start:save]
    optimizer.consolidate_state_dict(to=0)  # every rank sends its shard to rank 0
    if rank == 0:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, CHECKPOINT)
    dist.barrier()
    # --8<-- [end:save]

    del ddp_model, optimizer  # both hold the process group (ZeroRedundancyOptimizer too)
    gc.collect()  # DDP sits in reference cycles: free it now, before destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
