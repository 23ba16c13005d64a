"""Swap every BatchNorm layer of a model for SyncBatchNorm with one call.

The lesson docs/syncbn-and-sharding.md shows this program section by section. The
launch section below is the single source of how it runs: the page shows it and the
test in tests/snippets/test_syncbn_and_sharding/test_convert_syncbn.py runs exactly that
command. The conversion runs on any device; training with the converted layers needs
GPUs (see syncbn_train.py).

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 convert_syncbn.py
--8<-- [end:launch]
time-limit: 180 s
"""
import os
import sys

import torch
import torch.distributed as dist
from torch import nn

NUM_CLASSES = 4


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
# --8<-- [end:model]


def main() -> None:
    device = setup()

    # --8<-- [start:convert]
    torch.manual_seed(0)
    model = Net()
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)  # swaps every BatchNorm*d
    model = model.to(device)
    # --8<-- [end:convert]

    # --8<-- [start:report]
    if dist.get_rank() == 0:
        print(model)  # every BatchNorm1d/BatchNorm2d is now a SyncBatchNorm
    # --8<-- [end:report]

    # Nothing above communicated. Wait for every rank before leaving: with gloo, a rank that
    # destroys its group at once can close its connections while a slower rank is still
    # making them, which fails that rank's init_process_group ("connectFullMesh failed ...
    # Connection closed by peer"), about 4 runs in 48 on a busy machine.
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
