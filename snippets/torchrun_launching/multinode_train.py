"""Train a small model with DDP across several nodes, one torchrun agent per node.

The lesson docs/torchrun-launching.md shows the command below; every node runs the same
line. HEAD_ADDR is the address of the node that hosts the rendezvous (any one of them),
JOB_ID names the job; the defaults let two terminals on one machine act as two nodes.
The test in tests/snippets/test_torchrun_launching/test_multinode_train.py types this line
in two "terminals" of one machine, with the defaults, exactly as the page says.

--8<-- [start:launch]
torchrun --nnodes=2 --nproc-per-node=2 \
    --rdzv-backend=c10d --rdzv-endpoint=${HEAD_ADDR:-127.0.0.1}:${HEAD_PORT:-29400} \
    --rdzv-id=${JOB_ID:-lesson4} multinode_train.py
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

EPOCHS = 2
BATCH_SIZE = 16  # per process


# --8<-- [start:setup]
def choose_device(local_rank: int, local_world_size: int, gpus: int) -> tuple[torch.device, str]:
    """NCCL needs a GPU of its own for every process on the node; otherwise the CPU and gloo."""
    if gpus >= local_world_size:
        return torch.device("cuda", local_rank), "nccl"  # never RANK: it counts across nodes
    return torch.device("cpu"), "gloo"


def setup() -> torch.device:
    local_rank = int(os.environ["LOCAL_RANK"])  # the device index on this node
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


def make_dataset(n_samples: int = 512) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)  # the same data on every node
    x = torch.randn(n_samples, 8, generator=generator)
    y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(n_samples, 1, generator=generator)
    return TensorDataset(x, y)


def train(device: torch.device) -> None:
    # --8<-- [start:whoami]
    rank, world_size = dist.get_rank(), dist.get_world_size()
    node = int(os.environ["GROUP_RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    sys.stdout.write(
        f"node {node}, local rank {local_rank}: rank {rank} of {world_size} on {device}\n"
    )  # one write
    # --8<-- [end:whoami]

    dataset = make_dataset()
    sampler = DistributedSampler(dataset, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=BATCH_SIZE, sampler=sampler)

    torch.manual_seed(rank)  # different on every rank: DDP copies rank 0's weights to all of them
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
    ddp_model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.05)

    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(ddp_model(x), y)
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")


# --8<-- [start:teardown]
def main() -> None:
    device = setup()
    train(device)  # the model, the optimizer and the DDP wrapper are local to train()
    # DDP sits in reference cycles: free train()'s model now, before destroy_process_group()
    gc.collect()
    dist.destroy_process_group()  # every rank, once, after the last collective


if __name__ == "__main__":
    main()
# --8<-- [end:teardown]
