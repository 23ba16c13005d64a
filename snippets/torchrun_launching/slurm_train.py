"""Train a small model with DDP on a Slurm cluster: the batch script starts one torchrun
agent per node with srun, and the agents meet at a rendezvous on the first node.

The lesson docs/torchrun-launching.md shows the batch script slurm_train.sbatch and the
command below, which submits it from the folder holding both files. GPUS_PER_NODE is
the number of GPUs of one node; left unset, the job asks for none and every node runs
two workers on its CPUs. The test in
tests/snippets/test_torchrun_launching/test_slurm_train.py types this command, with the
default, on a real two-node Slurm cluster that the test session starts.

--8<-- [start:launch]
sbatch --gpus-per-node=${GPUS_PER_NODE:-0} slurm_train.sbatch
--8<-- [end:launch]
time-limit: 180 s
"""
import gc
import os
import sys

import torch
import torch.distributed as dist
# imported before any process group exists: lesson 4, "End every worker cleanly"
import torch.distributed.nn  # noqa: F401
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

EPOCHS = 2
BATCH_SIZE = 16  # per process


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


def make_dataset(n_samples: int = 512) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)  # the same data on every node
    x = torch.randn(n_samples, 8, generator=generator)
    y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(n_samples, 1, generator=generator)
    return TensorDataset(x, y)


def main() -> None:
    device = setup()
    rank, world_size = dist.get_rank(), dist.get_world_size()
    # --8<-- [start:whoami]
    # torchrun's numbers, and Slurm's for the task (the agent) that started this worker
    print(f"rank {rank} of {world_size}: local rank {os.environ['LOCAL_RANK']} on node rank "
          f"{os.environ['GROUP_RANK']}; Slurm task {os.environ['SLURM_PROCID']} "
          f"of {os.environ['SLURM_NTASKS']} "
          f"on {os.environ['SLURMD_NODENAME']}", flush=True)
    # --8<-- [end:whoami]

    dataset = make_dataset()
    sampler = DistributedSampler(dataset, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=BATCH_SIZE, sampler=sampler)

    torch.manual_seed(rank)  # a different start on every rank: DDP copies rank 0's weights
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
    ddp_model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.05)

    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(ddp_model(x), y)
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}", flush=True)

    del ddp_model  # the DDP model holds the process group
    gc.collect()  # DDP sits in reference cycles: free it now, before destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
