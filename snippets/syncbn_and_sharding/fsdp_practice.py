"""A fully_shard training step as real jobs write it: bf16 compute with fp32 gradient
reduction, activation checkpointing, explicit forward prefetch, gradient accumulation
without communication, and gradient clipping over sharded gradients.

The lesson docs/syncbn-and-sharding.md shows this program section by section. The
launch section below is the single source of how it runs: the page shows it and the
test in tests/snippets/test_syncbn_and_sharding/test_fsdp_practice.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 fsdp_practice.py
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
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.utils.checkpoint import checkpoint

STEPS = 2
ACCUMULATE = 2  # micro-batches per optimizer step
MICRO_BATCH = 8  # per process
MAX_NORM = 1.0
LR = 0.01


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
class Block(nn.Module):
    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(d_in, d_out), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # keep only the block's input for backward; recompute the rest there
        return checkpoint(self.layers, x, use_reentrant=False)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([Block(16, 64), Block(64, 64), Block(64, 64)])
        self.head = nn.Linear(64, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x)
# --8<-- [end:model]


def micro_batch(rank: int, step: int, micro: int) -> tuple[torch.Tensor, torch.Tensor]:
    # each rank its own data
    generator = torch.Generator().manual_seed(1000 * step + 10 * micro + rank)
    x = torch.randn(MICRO_BATCH, 16, generator=generator)
    return x, x.sum(dim=1, keepdim=True)


def run(device: torch.device) -> None:
    rank = dist.get_rank()

    # --8<-- [start:shard]
    torch.manual_seed(0)
    model = Net().to(device)
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    # setup()'s device (the default is the GPU)
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    for block in model.blocks:
        fully_shard(block, mesh=mesh, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)
    # --8<-- [end:shard]

    # --8<-- [start:prefetch]
    blocks = list(model.blocks)
    for current, following in zip(blocks, blocks[1:]):
        current.set_modules_to_forward_prefetch([following])  # gather the next block early
    # --8<-- [end:prefetch]

    optimizer = torch.optim.Adam(model.parameters(), lr=LR)

    # --8<-- [start:step]
    for step in range(STEPS):
        for micro in range(ACCUMULATE):
            # reduce-scatter on the last only
            model.set_requires_gradient_sync(micro == ACCUMULATE - 1)
            x, y = micro_batch(rank, step, micro)
            loss = nn.functional.mse_loss(model(x.to(device)).float(), y.to(device)) / ACCUMULATE
            loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=MAX_NORM)  # the global norm
        optimizer.step()
        optimizer.zero_grad()
        if rank == 0:
            print(f"step {step}: gradient norm {norm.item():.4f}, clipped to {MAX_NORM}")
    # --8<-- [end:step]


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
