"""Two kinds of parallelism on one two-dimensional device mesh of 4 processes: tensor
parallelism along one dimension and FSDP along the other; then the same mesh shape used
for HSDP (FSDP inside each group, replicas across the groups).

The lesson docs/data-vs-model-parallelism.md shows this program section by section.
The launch section below is the single source of how it runs: the page shows it and
the test in tests/snippets/test_data_vs_model_parallelism/test_mesh_2d.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=4 mesh_2d.py
--8<-- [end:launch]
time-limit: 150 s
"""
import gc
import os
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

BATCH = 8  # the global batch, split between the data-parallel groups
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


class Block(nn.Module):
    """The feed-forward block of tensor_parallel.py with its residual connection, as a
    transformer has it."""

    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(8, 32)  # weight: 32 x 8 (out_features x in_features)
        self.act = nn.ReLU()
        self.down = nn.Linear(32, 8)  # weight: 8 x 32

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(self.act(self.up(x)))


def train_step(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)  # built after sharding: sharded state
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def run(device: torch.device) -> None:
    rank, world_size = dist.get_rank(), dist.get_world_size()
    if world_size != 4:
        raise SystemExit(f"this mesh is 2 x 2, one process per place; got {world_size} processes")
    x, y = make_batch()
    x, y = x.to(device), y.to(device)

    # --8<-- [start:mesh]
    mesh = init_device_mesh(device.type, (2, 2), mesh_dim_names=("dp", "tp"))
    if rank == 0:  # one rank prints, so that the ranks' lines do not mix
        print(f"ranks by place {mesh.mesh.tolist()}: rank 0's tp group {mesh['tp'].mesh.tolist()}, "
              f"its dp group {mesh['dp'].mesh.tolist()}")
    # --8<-- [end:mesh]

    torch.manual_seed(0)  # every rank builds the same weights: FSDP does not broadcast
    # --8<-- [start:fsdp_tp]
    model = Block().to(device)
    parallelize_module(model, mesh["tp"], {"up": ColwiseParallel(), "down": RowwiseParallel()})
    fully_shard(model, mesh=mesh["dp"])  # shard each tensor-parallel shard again, across dp
    if rank == 0:
        for name, param in model.named_parameters():  # DTensors on the 2-D mesh
            print(f"{name} {tuple(param.shape)} {param.placements}, "
                  f"each rank holds {tuple(param.to_local().shape)}")
    # --8<-- [end:fsdp_tp]

    # --8<-- [start:step]
    dp_rank = mesh["dp"].get_local_rank()  # which data-parallel group this rank is in
    share = slice(dp_rank * BATCH // 2, (dp_rank + 1) * BATCH // 2)
    loss = train_step(model, x[share], y[share])  # the ranks of a tp group feed the same share
    losses = [None] * world_size
    dist.all_gather_object(losses, round(loss, 4))
    if rank == 0:
        print(f"FSDP x TP: loss by rank {losses}")
    # --8<-- [end:step]

    # --8<-- [start:hsdp]
    hsdp_mesh = init_device_mesh(device.type, (2, 2), mesh_dim_names=("replicate", "shard"))
    hsdp_model = Block().to(device)
    fully_shard(hsdp_model, mesh=hsdp_mesh)  # shard across "shard", replicate across "replicate"
    if rank == 0:
        for name, param in hsdp_model.named_parameters():
            print(f"HSDP {name} {tuple(param.shape)} {param.placements}, "
                  f"each rank holds {tuple(param.to_local().shape)}")
    quarter = slice(rank * BATCH // 4, (rank + 1) * BATCH // 4)  # plain data parallelism: 4 shares
    loss = train_step(hsdp_model, x[quarter], y[quarter])
    dist.all_gather_object(losses, round(loss, 4))
    if rank == 0:
        print(f"HSDP: loss by rank {losses}")
    # --8<-- [end:hsdp]


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
