"""The FSDP2 memory toolbox, counted: what reshard_after_forward as an int, keeping the
weights unsharded while gradients accumulate, and grouping modules into one unit change
in the collectives of one optimizer step of four micro-batches.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=4 fsdp_memory.py
--8<-- [end:launch]
time-limit: 180 s
"""
import gc
import os
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.profiler import ProfilerActivity, profile

BLOCKS = 4
WIDTH = 64
MICRO_BATCHES = 4  # per optimizer step
BATCH = 8  # samples per micro-batch and process
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


def make_model() -> nn.Sequential:
    blocks = [nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU()) for _ in range(BLOCKS)]
    return nn.Sequential(*blocks)


def micro_batches(rank: int, device: torch.device) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """This rank's MICRO_BATCHES (input, target) pairs of BATCH rows: the same in every run."""
    generator = torch.Generator().manual_seed(rank)
    xs = [torch.randn(BATCH, WIDTH, generator=generator) for _ in range(MICRO_BATCHES)]
    return [(x.to(device), x.flip(1).to(device)) for x in xs]


# --8<-- [start:shard]
def shard(model: nn.Sequential, mesh: DeviceMesh, reshard_after_forward: bool | int | None,
          grouped: bool) -> None:
    """Shard the model's blocks, one unit each or two per unit, and then the root."""
    blocks = list(model)
    # one unit per block, or one unit per pair of blocks: one all-gather for both
    units = [blocks[i:i + 2] for i in range(0, BLOCKS, 2)] if grouped else blocks
    for unit in units:
        fully_shard(unit, mesh=mesh, reshard_after_forward=reshard_after_forward)
    fully_shard(model, mesh=mesh)  # the root holds no parameters of its own
# --8<-- [end:shard]


def step(model: nn.Module, optimizer: torch.optim.Optimizer,
         batches: list[tuple[torch.Tensor, torch.Tensor]], keep_unsharded: bool) -> None:
    """One optimizer step that accumulates the gradients of all ``batches``."""
    # --8<-- [start:step]
    for i, (x, y) in enumerate(batches):
        last = i == len(batches) - 1
        model.set_requires_gradient_sync(last)  # reduce-scatter only after the last
        if keep_unsharded:
            model.set_reshard_after_backward(last)  # keep the full weights until then
        loss = nn.functional.mse_loss(model(x), y) / len(batches)
        loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    # --8<-- [end:step]


def run(device: torch.device) -> None:
    """One step under each setting; rank 0 prints the collectives each step ran."""
    rank = dist.get_rank()
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    batches = micro_batches(rank, device)
    # --8<-- [start:compare]
    settings = [  # (name, reshard_after_forward, keep unsharded, grouped)
        ("default", None, False, False),
        ("reshard_after_forward=False", False, False, False),
        ("reshard_after_forward=2", 2, False, False),
        ("keep unsharded while accumulating", False, True, False),
        ("two blocks per unit", None, False, True),
    ]
    for name, after_forward, keep_unsharded, grouped in settings:
        torch.manual_seed(0)
        model = make_model().to(device)
        shard(model, mesh, after_forward, grouped)
        optimizer = torch.optim.SGD(model.parameters(), lr=LR)
        with profile(activities=[ProfilerActivity.CPU]) as prof:  # records the collectives
            step(model, optimizer, batches, keep_unsharded)
        # every backend's collectives pass through these c10d operators (torch 2.13)
        counts = {e.key: e.count for e in prof.key_averages()}
        gathers = counts.get("c10d::_allgather_base_", 0)
        scatters = counts.get("c10d::_reduce_scatter_base_", 0)
        if rank == 0:
            print(f"{name}: {gathers} all-gathers, {scatters} reduce-scatters")
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
