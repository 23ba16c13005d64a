"""Where a sharded model's weights come from: fully_shard keeps whatever each rank
built (it does not broadcast), so a model too large for one device is built on the meta
device, sharded, given memory with to_empty, and then filled: from a full checkpoint
that rank 0 alone holds (broadcast_from_rank0), or freshly with reset_parameters.

The lesson docs/syncbn-and-sharding.md shows this program section by section. The
launch section below is the single source of how it runs: the page shows it and the
test in tests/snippets/test_syncbn_and_sharding/test_fsdp_init.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 fsdp_init.py
--8<-- [end:launch]
time-limit: 180 s
"""
import gc
import os
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard


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


def make_model() -> nn.Sequential:
    blocks = [nn.Sequential(nn.Linear(16 if i == 0 else 64, 64), nn.ReLU()) for i in range(3)]
    return nn.Sequential(*blocks, nn.Linear(64, 1))


def shard(model: nn.Sequential, device: torch.device) -> None:
    # setup()'s device (the default is the GPU)
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    for block in model[:-1]:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)


def origin(weight: torch.Tensor) -> str:
    """Where each rank's rows of a gathered first-layer weight come from: the rows of the
    weight that one process builds with which seed."""
    inits = {}
    for seed in range(dist.get_world_size()):
        torch.manual_seed(seed)
        inits[seed] = make_model()[0][0].weight.detach()
    parts, start = [], 0
    for rows in weight.cpu().chunk(dist.get_world_size()):
        found = [f"seed {seed} rows {i}-{i + len(rows) - 1}" for seed, init in inits.items()
                 for i in range(len(init) - len(rows) + 1)
                 if torch.equal(init[i:i + len(rows)], rows)]
        parts.append(f"rows {start}-{start + len(rows) - 1} = {found[0] if found else 'no seed'}")
        start += len(rows)
    return ", ".join(parts)


def run(device: torch.device) -> None:
    rank = dist.get_rank()

    # --8<-- [start:no-broadcast]
    torch.manual_seed(rank)  # on purpose: every rank builds different weights
    model = make_model().to(device)
    shard(model, device)
    weight = model[0][0].weight.full_tensor()  # gathers the shards of all ranks
    # --8<-- [end:no-broadcast]
    if rank == 0:
        print(f"seeded by rank:        {origin(weight)}")

    # --8<-- [start:meta]
    with torch.device("meta"):
        model = make_model()  # shapes only: no memory, no values
    shard(model, device)  # every parameter becomes a DTensor of meta shards
    model.to_empty(device=device)  # memory for this rank's shards, values undefined
    # --8<-- [end:meta]

    # --8<-- [start:load]
    full = {}
    if rank == 0:  # rank 0 alone holds the full weights, e.g. torch.load of a checkpoint
        torch.manual_seed(0)
        full = make_model().state_dict()
    options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
    set_model_state_dict(model, full, options=options)  # every rank takes part
    # --8<-- [end:load]
    weight = model[0][0].weight.full_tensor()
    if rank == 0:
        print(f"broadcast from rank 0: {origin(weight)}")

    # --8<-- [start:reset]
    with torch.device("meta"):
        model = make_model()
    shard(model, device)
    model.to_empty(device=device)
    torch.manual_seed(0)
    for module in model.modules():
        if isinstance(module, nn.Linear):
            module.reset_parameters()  # each rank draws the values of its own shard
    # --8<-- [end:reset]
    weight = model[0][0].weight.full_tensor()
    if rank == 0:
        print(f"reset_parameters:      {origin(weight)}")


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
