"""Checkpoint a sharded job as real jobs do, and resume it with a different number of
processes: model, optimizer and step in one Stateful object, a checkpoint folder per
step written in the background with dcp.async_save, and on start the latest checkpoint
loaded into however many shards this job has.

The lesson docs/syncbn-and-sharding.md shows this program section by section. The
launch section below is the single source of how it runs: the page shows it and the
test in tests/snippets/test_syncbn_and_sharding/test_dcp_resume.py runs exactly that
command: two processes train and save, then three resume from their checkpoint.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 dcp_resume.py && \
    torchrun --standalone --nproc-per-node=3 dcp_resume.py
--8<-- [end:launch]
time-limit: 300 s
"""
import gc
import os
import sys

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.checkpoint.stateful import Stateful
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

STEPS = 3  # per job
GLOBAL_BATCH = 12  # split evenly over 2 or 3 processes
LR = 0.01
CHECKPOINTS = "checkpoints"


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


def global_batch(step: int) -> torch.Tensor:
    """The same global batch for a step, whatever the number of processes."""
    return torch.randn(GLOBAL_BATCH, 16, generator=torch.Generator().manual_seed(step))


# --8<-- [start:stateful]
class TrainingState(Stateful):
    """What a resumed job needs, as one object that DCP saves and loads."""

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer) -> None:
        self.model, self.optimizer, self.step = model, optimizer, 0

    def state_dict(self) -> dict:
        model_state, optim_state = get_state_dict(self.model, self.optimizer)  # sharded
        return {"model": model_state, "optimizer": optim_state, "step": self.step}

    def load_state_dict(self, state: dict) -> None:
        set_state_dict(self.model, self.optimizer, model_state_dict=state["model"],
                       optim_state_dict=state["optimizer"])
        self.step = state["step"]
# --8<-- [end:stateful]


def run(device: torch.device) -> None:
    rank, world_size = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(0)
    model = make_model().to(device)
    # setup()'s device (the default is the GPU)
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    for block in model[:-1]:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)

    # --8<-- [start:resume]
    training = TrainingState(model, optimizer)
    # .metadata is written last: a folder without it is an unfinished checkpoint
    saved = sorted(
        d for d in os.listdir(CHECKPOINTS)
        if os.path.exists(os.path.join(CHECKPOINTS, d, ".metadata"))
    ) if os.path.isdir(CHECKPOINTS) else []
    if saved:
        dcp.load({"training": training}, checkpoint_id=os.path.join(CHECKPOINTS, saved[-1]))
    rows = model[0][0].weight.to_local().shape[0]
    print(f"rank {rank} of {world_size}: starting at step {training.step} "
          f"({'from ' + saved[-1] if saved else 'fresh'}), holding {rows} of 64 rows of 0.0.weight")
    # --8<-- [end:resume]

    # --8<-- [start:train]
    checkpoint_group = dist.new_group(backend="gloo")  # for the background writer's collectives
    pending = None
    for _ in range(STEPS):
        x = global_batch(training.step).chunk(world_size)[rank].to(device)  # this rank's share
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True)).backward()
        optimizer.step()
        training.step += 1
        if pending is not None:
            pending.result()  # one checkpoint in flight at a time
        path = os.path.join(CHECKPOINTS, f"step-{training.step:04d}")
        pending = dcp.async_save(
            {"training": training}, checkpoint_id=path, process_group=checkpoint_group
        )
    pending.result()  # the last checkpoint is complete before the job ends
    # --8<-- [end:train]
    if rank == 0:
        print(f"{world_size} processes saved steps {training.step - STEPS + 1}-{training.step}")


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
