"""Tensor parallelism on a device mesh: in each of two feed-forward blocks the first linear
layer is split column-wise and the second row-wise, so each process holds half of each
weight; CommDebugMode counts the all-reduces of the forward and the backward pass.

The lesson docs/data-vs-model-parallelism.md shows this program section by section.
The launch section below is the single source of how it runs: the page shows it and the test in
tests/snippets/test_data_vs_model_parallelism/test_tensor_parallel.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 tensor_parallel.py
--8<-- [end:launch]
time-limit: 120 s
"""
import gc
import os
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.debug import CommDebugMode
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

BATCH = 4
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


def run(device: torch.device) -> None:
    rank, world_size = dist.get_rank(), dist.get_world_size()

    # --8<-- [start:mesh]
    mesh = init_device_mesh(device.type, (world_size,), mesh_dim_names=("tp",))
    # --8<-- [end:mesh]

    torch.manual_seed(rank)  # each rank draws different weights: only rank 0's are kept
    # --8<-- [start:parallelize]
    # two blocks, as a transformer stacks them
    model = nn.Sequential(FeedForward(), FeedForward()).to(device)
    for block in model:
        parallelize_module(block, mesh, {
            "up": ColwiseParallel(),  # split the output features
            "down": RowwiseParallel(),  # split the input features, all-reduce the output
        })
    # --8<-- [end:parallelize]

    # --8<-- [start:shards]
    if rank == 0:  # every rank holds shards of the same shapes; one of them prints
        for name, param in model[0].named_parameters():  # DTensors: a global shape, a local shard
            print(f"{name} {tuple(param.shape)} {param.placements[0]!r}, "
                  f"each rank holds {tuple(param.to_local().shape)}")
    # --8<-- [end:shards]

    # --8<-- [start:step]
    x, y = make_batch()  # every rank feeds the same full input
    x, y = x.to(device), y.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    with CommDebugMode() as forward_comms:
        out = model(x)  # not a DTensor: an ordinary tensor, the same on every rank
    loss = nn.functional.mse_loss(out, y)
    with CommDebugMode() as backward_comms:
        loss.backward()  # each rank gets the gradient of its own shards
    optimizer.step()
    # --8<-- [end:step]

    # --8<-- [start:count]
    if rank == 0:
        print(f"output {tuple(out.shape)}, loss {loss.item():.4f}")
        for phase, comms in (("forward", forward_comms), ("backward", backward_comms)):
            counts = {str(op).split(".")[-1]: n for op, n in comms.get_comm_counts().items()}
            print(f"{phase} pass: {counts}")
    # --8<-- [end:count]


def release_dtensor_caches() -> None:
    """A torch 2.13 workaround, needed with gloo: make DTensor's caches forget the meshes
    they hold. A mesh holds its process groups, so while a cache holds it,
    destroy_process_group() cannot free them. Sharding propagation keeps its caches per
    thread (a Python one and the C++ fast path's), and this clears only the calling
    thread's; the other three caches are shared by the whole process. torch 2.13 has no
    public call for this; these private ones may change in another version, so one that
    is missing is skipped."""
    try:
        from torch.distributed.tensor import _collective_utils, _redistribute, debug
    except ImportError:
        return
    clears = (
        # output shardings, keyed by op and input specs
        getattr(debug, "_clear_sharding_prop_cache", None),
        # redistribute steps
        getattr(getattr(_redistribute, "_gen_transform_infos", None), "cache_clear", None),
        # redistribute planners, each with its mesh
        getattr(_redistribute, "clear_redistribute_planner_cache", None),
        # mesh topologies, keyed by mesh
        getattr(getattr(getattr(_collective_utils, "MeshTopoInfo", None), "build_from_mesh", None),
                "cache_clear", None),
    )
    for clear in clears:
        if clear is not None:
            clear()


def main() -> None:
    device = setup()
    run(device)  # the models, meshes and DTensors are local to run()
    release_dtensor_caches()
    # freeing one layer of cycles can expose the next: collect until a pass finds none
    while gc.collect():
        pass
    dist.destroy_process_group()  # frees the groups: no gloo thread outlives the program


if __name__ == "__main__":
    main()
