"""SyncBatchNorm on the CPU: it evaluates, but it will not train, and DDP will not wrap it.

A "break it" program: it runs on the CPU with gloo on purpose, even where GPUs are
present. The lesson docs/syncbn-and-sharding.md shows it section by section; the test in
tests/snippets/test_syncbn_and_sharding/test_syncbn_on_cpu.py runs exactly the command
below and checks that it fails where and how the page says.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 syncbn_on_cpu.py
--8<-- [end:launch]
time-limit: 120 s
outcome: fails
"""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main() -> None:
    dist.init_process_group(backend="gloo")  # the CPU, on purpose
    rank = dist.get_rank()
    torch.manual_seed(0)
    x = torch.randn(4, 3, 8, 8)

    # --8<-- [start:cpu]
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)  # the swap works anywhere

    model.eval()
    model(x)  # evaluation: running statistics, no communication
    print(f"rank {rank}: evaluation forward on the CPU: fine")

    model.train()
    try:
        model(x)  # training: SyncBatchNorm refuses CPU inputs
    except ValueError as error:
        print(f"rank {rank}: training forward on the CPU: {error}")

    ddp_model = DDP(model)  # ValueError: SyncBatchNorm layers only work with GPU modules
    # --8<-- [end:cpu]

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
