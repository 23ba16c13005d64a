"""One node with a fixed --master-port: the port is the job's, and a second job cannot have it.

The lesson docs/torchrun-launching.md shows this program's launch line under "Usual
failures"; the test in tests/snippets/test_torchrun_launching/test_fixed_port.py runs
it twice at the same time on one machine.

--8<-- [start:launch]
torchrun --nproc-per-node=2 --master-port=29500 fixed_port.py
--8<-- [end:launch]
time-limit: 90 s
"""
import os
import sys

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
    sys.stdout.write(f"rank {rank}: store at "
                     f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}, "
                     f"rendezvous id {os.environ['TORCHELASTIC_RUN_ID']}\n")  # one write per line
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
