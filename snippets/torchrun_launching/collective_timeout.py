"""The same one-rank collective as stuck.py, with a process-group timeout and @record: the
job fails after the timeout, and torchrun's summary names the rank and the line.

The lesson docs/torchrun-launching.md shows this program; the test in
tests/snippets/test_torchrun_launching/test_collective_timeout.py runs the page's line and
reads each rank's error and torchrun's failure summary.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 collective_timeout.py
--8<-- [end:launch]
time-limit: 120 s
outcome: fails
"""
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.elastic.multiprocessing.errors import record


# --8<-- [start:main]
@record  # an uncaught exception goes to torchrun's failure summary, traceback included
def main() -> None:
    device = torch.device("cpu")  # gloo on the CPU, GPUs or not, as in stuck.py
    dist.init_process_group(backend="gloo", timeout=timedelta(seconds=10))
    # --8<-- [end:main]
    rank = dist.get_rank()

    torch.manual_seed(rank)
    model = nn.Linear(8, 1).to(device)
    loss = model(torch.randn(64, 8, device=device)).pow(2).mean().detach()
    sys.stdout.write(f"rank {rank}: local loss {loss.item():.4f}\n")  # one write per line

    if rank == 0:  # wrong: only rank 0 calls the collective
        dist.all_reduce(loss)
        print(f"mean loss {loss.item() / dist.get_world_size():.4f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
