"""Tensor parallelism on a device mesh: the first linear layer split column-wise, the
second row-wise, so each process holds half of each weight and one all-reduce combines
the partial results.

The lesson docs/data-vs-model-parallelism.md shows this program section by section.
The launch section below is the single source of how it runs: the page shows it and
the test in tests/snippets/test_data_vs_model_parallelism/test_tensor_parallel.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 tensor_parallel.py
--8<-- [end:launch]
time-limit: 60 s
"""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

BATCH = 4
LR = 0.05


def setup() -> torch.device:
    local_rank = int(os.environ["LOCAL_RANK"])  # set by torchrun
    if torch.cuda.is_available():
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        dist.init_process_group(backend="nccl")
    else:
        device = torch.device("cpu")
        dist.init_process_group(backend="gloo")
    return device


def make_batch() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)  # the same batch on every rank
    x = torch.randn(BATCH, 8, generator=generator)
    y = torch.randn(BATCH, 8, generator=generator)
    return x, y


# --8<-- [start:model]
class FeedForward(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(8, 32)  # weight: 32 x 8 (out_features x in_features)
        self.act = nn.ReLU()
        self.down = nn.Linear(32, 8)  # weight: 8 x 32

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(self.act(self.up(x)))
# --8<-- [end:model]


def main() -> None:
    device = setup()
    rank, world_size = dist.get_rank(), dist.get_world_size()

    # --8<-- [start:mesh]
    mesh = init_device_mesh(device.type, (world_size,), mesh_dim_names=("tp",))
    # --8<-- [end:mesh]

    torch.manual_seed(0)  # reproducible initial weights
    # --8<-- [start:parallelize]
    model = FeedForward().to(device)
    model = parallelize_module(model, mesh, {
        "up": ColwiseParallel(),  # split the output features
        "down": RowwiseParallel(),  # split the input features, all-reduce the output
    })
    # --8<-- [end:parallelize]

    # --8<-- [start:shards]
    for name, param in model.named_parameters():  # DTensors: a global shape, a local shard
        local = param.to_local()
        print(f"rank {rank}: {name} {tuple(param.shape)} {param.placements[0]!r}, "
              f"holds {tuple(local.shape)}")
    # --8<-- [end:shards]

    # --8<-- [start:step]
    x, y = make_batch()  # every rank feeds the same full input
    x, y = x.to(device), y.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    out = model(x)  # a plain tensor, the same on every rank
    loss = nn.functional.mse_loss(out, y)
    loss.backward()  # each rank gets the gradient of its own shards
    optimizer.step()
    print(f"rank {rank}: output {tuple(out.shape)}, loss {loss.item():.4f}")
    # --8<-- [end:step]

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
