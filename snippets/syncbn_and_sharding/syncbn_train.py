"""Train with SyncBatchNorm: BatchNorm statistics over the global batch of all GPUs.

The lesson docs/syncbn-and-sharding.md shows this program section by section. The
launch section below is the single source of how it runs: the page shows it and the
test in tests/snippets/test_syncbn_and_sharding/test_syncbn_train.py runs exactly that command.
SyncBatchNorm's synchronized forward and backward run only on GPUs: with a GPU per
process over NCCL, and with fewer GPUs than processes (processes sharing a GPU) over gloo,
which SyncBatchNorm also supports.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 syncbn_train.py
--8<-- [end:launch]
time-limit: 120 s
requires: cuda>=1
"""
import gc
import os

import torch
import torch.distributed as dist
# imported before any process group exists: lesson 4, "End every worker cleanly"
import torch.distributed.nn  # noqa: F401
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

NUM_CLASSES = 4
EPOCHS = 2
BATCH_SIZE = 4  # per GPU: small, the case SyncBatchNorm is for
LR = 0.05


def choose_device(local_rank: int, local_world_size: int, gpus: int) -> tuple[torch.device, str]:
    """SyncBatchNorm trains only on CUDA: NCCL with a GPU of its own for every process,
    else gloo over GPUs the processes share (SyncBatchNorm supports both)."""
    if gpus == 0:
        raise SystemExit("syncbn_train.py needs a CUDA GPU: SyncBatchNorm does not train on a CPU")
    if gpus >= local_world_size:
        return torch.device("cuda", local_rank), "nccl"
    return torch.device("cuda", local_rank % gpus), "gloo"


def setup() -> torch.device:
    local_rank = int(os.environ["LOCAL_RANK"])  # set by torchrun
    local_world_size = int(os.environ["LOCAL_WORLD_SIZE"])  # processes on this node
    device, backend = choose_device(local_rank, local_world_size, torch.cuda.device_count())
    torch.cuda.set_device(device)
    dist.init_process_group(backend, device_id=device if backend == "nccl" else None)
    return device


def make_dataset(n_samples: int = 64) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)  # same data on every rank
    x = torch.randn(n_samples, 3, 8, 8, generator=generator)
    y = torch.randint(0, NUM_CLASSES, (n_samples,), generator=generator)
    return TensorDataset(x, y)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.head = nn.Sequential(
            nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, NUM_CLASSES)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def main() -> None:
    device = setup()
    rank = dist.get_rank()

    dataset = make_dataset()
    sampler = DistributedSampler(dataset, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=BATCH_SIZE, sampler=sampler)

    # --8<-- [start:wrap]
    torch.manual_seed(0)
    model = Net()
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)  # 1. swap the layers
    model = model.to(device)  # 2. move the finished model
    ddp_model = DDP(model, device_ids=[device.index])  # 3. wrap last
    # --8<-- [end:wrap]
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=LR)
    loss_fn = nn.CrossEntropyLoss()

    # --8<-- [start:train]
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        ddp_model.train()  # statistics are synchronized in training mode only
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = loss_fn(ddp_model(x), y)  # each SyncBatchNorm layer communicates here
            loss.backward()  # and here, besides DDP's gradient all-reduce
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")
    # --8<-- [end:train]

    del ddp_model  # the DDP model holds the process group
    gc.collect()  # DDP sits in reference cycles: free it now, before destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
