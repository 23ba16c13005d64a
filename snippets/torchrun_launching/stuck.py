"""A collective that only one rank calls: the job hangs, and every rank's stack shows where.

The lesson docs/torchrun-launching.md shows this program as the example of a hang: rank 0
alone calls all_reduce to log the mean loss, the other ranks go on to the barrier, and
nothing ever completes. The test in tests/snippets/test_torchrun_launching/test_stuck.py
runs the page's line, reads every rank's stack with py-spy and with faulthandler while the
job hangs, and lets the runner stop it at the time limit.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 stuck.py
--8<-- [end:launch]
While it hangs, from another terminal, for the process id of each worker:
--8<-- [start:stacks]
py-spy dump --pid PID
--8<-- [end:stacks]
time-limit: 60 s
outcome: hangs
blocked-in: rank 0: dist.all_reduce(loss)
blocked-in: other ranks: dist.barrier()
"""
import faulthandler
import os
import signal
import sys

import torch
import torch.distributed as dist
from torch import nn


def main() -> None:
    # --8<-- [start:faulthandler]
    # kill -USR1 PID prints this process's stack
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    # --8<-- [end:faulthandler]
    # gloo on the CPU, GPUs or not: on NCCL this mistake does not hang here (see the page)
    device = torch.device("cpu")
    dist.init_process_group(backend="gloo")
    rank = dist.get_rank()

    torch.manual_seed(rank)  # each rank its own data
    model = nn.Linear(8, 1).to(device)
    loss = model(torch.randn(64, 8, device=device)).pow(2).mean().detach()
    # one write per line
    sys.stdout.write(f"rank {rank} (pid {os.getpid()}): local loss {loss.item():.4f}\n")

    # --8<-- [start:bug]
    if rank == 0:  # wrong: all_reduce is a collective, and here only rank 0 calls it
        dist.all_reduce(loss)
        print(f"mean loss {loss.item() / dist.get_world_size():.4f}")
    sys.stdout.write(f"rank {rank}: waiting at the barrier\n")
    dist.barrier()
    # --8<-- [end:bug]
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
