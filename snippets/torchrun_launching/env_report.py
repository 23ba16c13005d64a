"""Report what torchrun gave each worker process, then check it against the process group.

The lesson docs/torchrun-launching.md shows this program and its launch command; the
test in tests/snippets/test_torchrun_launching/test_env_report.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 env_report.py
--8<-- [end:launch]
time-limit: 90 s
"""
import os
import sys

import torch
import torch.distributed as dist

# What torchrun puts into the environment of every worker it starts
TORCHRUN_VARIABLES = (
    "RANK",  # this worker's number in the whole job
    "LOCAL_RANK",  # its number on this node: pick the device with it
    "WORLD_SIZE",  # workers in the whole job
    "LOCAL_WORLD_SIZE",  # workers on this node
    "GROUP_RANK",  # this node's number among the nodes
    "MASTER_ADDR",  # where init_process_group finds the job's store
    "MASTER_PORT",
    "TORCHELASTIC_RESTART_COUNT",  # restarts used up after worker failures
    "TORCHELASTIC_MAX_RESTARTS",
    "TORCHELASTIC_RUN_ID",  # the rendezvous id
    "OMP_NUM_THREADS",  # 1 when several workers share a node and it was not set
)


def choose_device(local_rank: int, local_world_size: int, gpus: int) -> tuple[torch.device, str]:
    """NCCL needs a GPU of its own for every process on the node; otherwise the CPU and gloo."""
    if gpus >= local_world_size:
        return torch.device("cuda", local_rank), "nccl"
    return torch.device("cpu"), "gloo"


def main() -> None:
    # --8<-- [start:report]
    given = {name: os.environ[name] for name in TORCHRUN_VARIABLES}
    line = f"pid {os.getpid()}: " + " ".join(f"{name}={value}" for name, value in given.items())
    # one write per line, so that lines of workers sharing a terminal never merge
    sys.stdout.write(line + "\n")

    device, backend = choose_device(
        int(given["LOCAL_RANK"]), int(given["LOCAL_WORLD_SIZE"]), torch.cuda.device_count()
    )
    if device.type == "cuda":
        torch.cuda.set_device(device)
    # reads RANK, WORLD_SIZE, …
    dist.init_process_group(backend, device_id=device if device.type == "cuda" else None)
    rank, world_size = dist.get_rank(), dist.get_world_size()
    sys.stdout.write(f"process group: rank {rank} of {world_size}, backend {dist.get_backend()}\n")
    # --8<-- [end:report]

    dist.barrier()  # every worker joined the same group
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
