"""One node, no --standalone and no port: torchrun still picks a free port for the job.

The lesson docs/torchrun-launching.md shows this program's launch line under "Usual
failures"; the test in tests/snippets/test_torchrun_launching/test_default_port.py runs
it twice at the same time on one machine.

--8<-- [start:launch]
torchrun --nproc-per-node=2 default_port.py
--8<-- [end:launch]
time-limit: 90 s
"""
import os
import sys

import torch
import torch.distributed as dist


def main() -> None:
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        dist.init_process_group(backend="nccl")
    else:
        dist.init_process_group(backend="gloo")
    rank = dist.get_rank()
    sys.stdout.write(f"rank {rank}: store at {os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}, "
                     f"rendezvous id {os.environ['TORCHELASTIC_RUN_ID']}\n")  # one write per line
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
