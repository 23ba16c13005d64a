"""Train a small model with FSDP (fully_shard): every process stores only its shard of
the parameters, gradients and optimizer state.

The lesson docs/syncbn-and-sharding.md shows this program section by section. The
launch section below is the single source of how it runs: the page shows it and the
test in tests/snippets/test_syncbn_and_sharding/test_fsdp_train.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 fsdp_train.py
--8<-- [end:launch]
time-limit: 180 s
"""
import gc
import os
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

EPOCHS = 3
BATCH_SIZE = 16  # per process
LR = 0.01
CHECKPOINT = "model.pt"


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


def make_dataset(n_samples: int = 128) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)  # same data on every rank
    x = torch.randn(n_samples, 16, generator=generator)
    true_w = torch.randn(16, 1, generator=generator)
    y = x @ true_w + 0.1 * torch.randn(n_samples, 1, generator=generator)
    return TensorDataset(x, y)


# --8<-- [start:model]
def make_model() -> nn.Sequential:
    blocks = [nn.Sequential(nn.Linear(16 if i == 0 else 64, 64), nn.ReLU()) for i in range(3)]
    return nn.Sequential(*blocks, nn.Linear(64, 1))
# --8<-- [end:model]


def run(device: torch.device) -> None:
    rank = dist.get_rank()

    dataset = make_dataset()
    sampler = DistributedSampler(dataset, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=BATCH_SIZE, sampler=sampler)

    # --8<-- [start:shard]
    torch.manual_seed(0)  # the same initial weights on every rank: FSDP does not broadcast
    model = make_model().to(device)
    # setup()'s device (the default is the GPU)
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    for block in model[:-1]:
        fully_shard(block, mesh=mesh)  # one unit per block: gathered for its forward, then freed
    fully_shard(model, mesh=mesh)  # the root unit takes the remaining parameters (the last Linear)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)  # built after sharding
    # --8<-- [end:shard]

    # --8<-- [start:shards]
    local = sum(p.to_local().numel() * p.element_size() for p in model.parameters())
    total = sum(p.numel() * p.element_size() for p in model.parameters())
    print(f"rank {rank} holds {local:,} of {total:,} parameter bytes")
    # --8<-- [end:shards]

    # --8<-- [start:train]
    loss_fn = nn.MSELoss()
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)  # all-gather each unit's weights just in time
            loss.backward()  # reduce-scatter: each rank keeps its shard of the gradients
            optimizer.step()  # each rank updates only its shard
        if rank == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")
    # --8<-- [end:train]

    # --8<-- [start:save]
    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    state = get_model_state_dict(model, options=options)  # every rank takes part
    if rank == 0:
        torch.save(state, CHECKPOINT)  # the full, unsharded weights
    dist.barrier()
    # --8<-- [end:save]


# --8<-- [start:teardown]
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
# --8<-- [end:teardown]
