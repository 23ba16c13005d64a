"""monitored_barrier names the rank that did not arrive.

Rank 1 stands for a rank stuck in its own work (a slow file system, a deadlock in a
data-loading thread); the others wait for it at a monitored_barrier, which gives up after
its timeout and says which rank it waited for. The lesson docs/torchrun-launching.md shows
this program; the test in tests/snippets/test_torchrun_launching/test_find_stuck_rank.py
reads rank 0's error.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 find_stuck_rank.py
--8<-- [end:launch]
time-limit: 120 s
outcome: fails
"""
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist


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


def main() -> None:
    setup()
    rank = dist.get_rank()
    # --8<-- [start:monitor]
    # monitored_barrier runs on gloo, whatever the job's backend
    monitor = dist.new_group(backend="gloo")

    if rank == 1:
        time.sleep(3600)  # stands for a rank stuck in its own work
    print(f"rank {rank}: at the monitored barrier", flush=True)
    dist.monitored_barrier(group=monitor, timeout=timedelta(seconds=10), wait_all_ranks=True)
    # --8<-- [end:monitor]
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
