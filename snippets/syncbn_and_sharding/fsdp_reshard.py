"""What fully_shard keeps between the forward and the backward pass: with the default
reshard_after_forward, every unit but the root frees its full weights after its forward
pass; with reshard_after_forward=False every unit keeps them until its backward pass.

The lesson docs/syncbn-and-sharding.md shows this program section by section. The
launch section below is the single source of how it runs: the page shows it and the
test in tests/snippets/test_syncbn_and_sharding/test_fsdp_reshard.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 fsdp_reshard.py
--8<-- [end:launch]
time-limit: 180 s
"""
import gc
import os
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor


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


# --8<-- [start:held]
def held(model: nn.Sequential) -> str:
    """What each unit's parameters are right now: sharded DTensors or full plain tensors."""
    units = {f"block {i}": block[0].weight for i, block in enumerate(model[:-1])}
    units["root"] = model[-1].weight  # the last Linear belongs to the root unit
    return ", ".join(
        f"{name} {'sharded' if isinstance(w, DTensor) else 'full'}" for name, w in units.items()
    )
# --8<-- [end:held]


def run(device: torch.device) -> None:
    rank = dist.get_rank()
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(rank)).to(device)

    # --8<-- [start:compare]
    for reshard_after_forward in (None, False):  # None is the default
        torch.manual_seed(0)
        model = make_model().to(device)
        # setup()'s device (the default is the GPU)
        mesh = init_device_mesh(device.type, (dist.get_world_size(),))
        for block in model[:-1]:
            fully_shard(block, mesh=mesh, reshard_after_forward=reshard_after_forward)
        fully_shard(model, mesh=mesh, reshard_after_forward=reshard_after_forward)

        loss = model(x).pow(2).mean()
        after_forward = held(model)
        loss.backward()
        if rank == 0:
            print(f"reshard_after_forward={reshard_after_forward}:")
            print(f"  after forward:  {after_forward}")
            print(f"  after backward: {held(model)}")
    # --8<-- [end:compare]


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
