"""Train with DDP, checkpoint every few steps, and resume mid-epoch after a restart.

The lesson docs/torchrun-launching.md shows this program and its launch command; the
test in tests/snippets/test_torchrun_launching/test_elastic_train.py runs exactly that
command, kills one worker in the middle of an epoch, and checks that torchrun restarted
the workers and that they carried on from the last checkpoint, at the step where it was
taken, to the same weights as a run that was never interrupted.

--8<-- [start:launch]
TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 torchrun --standalone --nproc-per-node=2 \
    --max-restarts=1 elastic_train.py
--8<-- [end:launch]
time-limit: 120 s
"""
import gc
import itertools
import os
import sys
from pathlib import Path

import torch
import torch.distributed as dist
# imported before any process group exists: lesson 4, "End every worker cleanly"
import torch.distributed.nn  # noqa: F401
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

EPOCHS = 4
BATCH_SIZE = 32  # per process
SAVE_EVERY = 10  # optimizer steps between checkpoints
CHECKPOINT = Path("checkpoint.pt")  # on multi-node jobs: a path every node can read


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


def make_dataset(n_samples: int = 2048) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(n_samples, 32, generator=generator)
    y = torch.sin(x[:, :1]) + x[:, 1:2] ** 2 + 0.1 * torch.randn(n_samples, 1, generator=generator)
    return TensorDataset(x, y)


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 1)
    )


# --8<-- [start:save]
def save_checkpoint(
    model: nn.Module, optimizer: torch.optim.Optimizer, epoch: int, step: int
) -> None:
    """Save everything needed to continue with batch ``step`` of ``epoch``."""
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "epoch": epoch,
        "step": step,
    }
    tmp = CHECKPOINT.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, CHECKPOINT)  # atomic: a crash never leaves a half-written checkpoint
# --8<-- [end:save]


# --8<-- [start:load]
def load_checkpoint(
    model: nn.Module, optimizer: torch.optim.Optimizer, device: torch.device
) -> tuple[int, int]:
    """Restore the last checkpoint, if any; return (epoch, step) to continue from."""
    if not CHECKPOINT.exists():
        return 0, 0
    state = torch.load(CHECKPOINT, map_location=device, weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"], state["step"]
# --8<-- [end:load]


def train(device: torch.device) -> None:
    rank = dist.get_rank()
    dataset = make_dataset()
    sampler = DistributedSampler(dataset, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=BATCH_SIZE, sampler=sampler)

    # --8<-- [start:resume]
    torch.manual_seed(0)
    model = make_model().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    start_epoch, start_step = load_checkpoint(model, optimizer, device)  # every rank loads it
    ddp_model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    if rank == 0:
        restarts = os.environ["TORCHELASTIC_RESTART_COUNT"]
        print(f"restart {restarts}: starting at epoch {start_epoch}, "
              f"step {start_step} of {len(loader)}")
    # --8<-- [end:resume]

    # --8<-- [start:train]
    for epoch in range(start_epoch, EPOCHS):
        sampler.set_epoch(epoch)  # the same order as in an uninterrupted run
        skip = start_step if epoch == start_epoch else 0  # batches trained before the restart
        for step, (x, y) in enumerate(itertools.islice(loader, skip, None), start=skip):
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(ddp_model(x), y)
            loss.backward()
            optimizer.step()
            done = epoch * len(loader) + step + 1  # optimizer steps since the start of training
            if rank == 0 and (done % SAVE_EVERY == 0 or done == EPOCHS * len(loader)):
                save_checkpoint(model, optimizer, *divmod(done, len(loader)))
                print(f"epoch {epoch} step {step}: loss {loss.item():.4f}, checkpoint saved")
    # --8<-- [end:train]


def main() -> None:
    device = setup()
    train(device)
    # DDP sits in reference cycles: free train()'s model now, before destroy_process_group()
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
