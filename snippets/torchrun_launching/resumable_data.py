"""Resume mid-epoch from the data loader's saved position, with a loss per token.

Trains a small next-token model on sequences of different lengths. Each rank's
StatefulDataLoader position is saved in the checkpoint with the weights, so a restarted
job reads no batch from before the checkpoint again. Each step's loss is divided by the
number of tokens of the whole step on all ranks, so every token weighs the same however
the sequences fall into batches. The first attempt stops the last rank on purpose in epoch 1, as
a lost node would; torchrun restarts both workers, and they carry on from the checkpoint.

--8<-- [start:launch]
TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 torchrun --standalone --nproc-per-node=2 \
    --max-restarts=1 resumable_data.py
--8<-- [end:launch]
time-limit: 120 s
"""
import contextlib
import gc
import os
import sys
from pathlib import Path

import torch
import torch.distributed as dist
# imported before any process group exists: lesson 4, "End every worker cleanly"
import torch.distributed.nn  # noqa: F401
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import Dataset
from torchdata.stateful_dataloader import StatefulDataLoader
from torchdata.stateful_dataloader.sampler import StatefulDistributedSampler

EPOCHS = 3
SEQUENCES = 96
VOCAB = 64
BATCH_SIZE = 8  # sequences per process and step
MICRO_BATCHES = 2  # each step's batch is split into this many backward passes
LR = 0.5
SAVE_EVERY = 4  # optimizer steps between checkpoints
STOP_AT = 10  # the first attempt loses its last rank after this many steps
CHECKPOINT = Path("checkpoint.pt")  # on multi-node jobs: a path every node can read
IGNORE = -100  # label of padding: cross_entropy's default ignore_index


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


class Sequences(Dataset):
    """Sequences of 4 to 40 tokens, item i always the same: after token t comes t + 1
    three times in four, a random token otherwise."""

    def __init__(self, n: int = SEQUENCES) -> None:
        generator = torch.Generator().manual_seed(0)
        lengths = torch.randint(4, 41, (n,), generator=generator).tolist()
        self.sequences = []
        for length in lengths:
            tokens = torch.randint(VOCAB, (length,), generator=generator)
            follows = torch.rand(length, generator=generator) < 0.75
            for i in range(1, length):
                if follows[i]:
                    tokens[i] = (tokens[i - 1] + 1) % VOCAB
            self.sequences.append(tokens)

    def __len__(self) -> int:
        return len(self.sequences)

    def __getitem__(self, i: int) -> torch.Tensor:
        return self.sequences[i]


def collate(sequences: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad to the longest sequence; each token's label is the next token, IGNORE at padding."""
    inputs = pad_sequence([s[:-1] for s in sequences], batch_first=True)
    labels = pad_sequence([s[1:] for s in sequences], batch_first=True, padding_value=IGNORE)
    return inputs, labels


def make_model() -> nn.Module:
    return nn.Sequential(nn.Embedding(VOCAB, 32), nn.Linear(32, VOCAB))


# --8<-- [start:loader]
def make_loader(dataset: Dataset) -> StatefulDataLoader:
    sampler = StatefulDistributedSampler(dataset, shuffle=True, seed=0)
    return StatefulDataLoader(dataset, batch_size=BATCH_SIZE, sampler=sampler,
                              collate_fn=collate)
# --8<-- [end:loader]


# --8<-- [start:save]
def save_checkpoint(model: nn.Module, optimizer: torch.optim.Optimizer,
                    loader: StatefulDataLoader, epoch: int, done: int) -> None:
    """Every rank calls this: each rank's loader position goes to rank 0, which saves."""
    rank = dist.get_rank()
    positions = [None] * dist.get_world_size() if rank == 0 else None
    dist.gather_object(loader.state_dict(), positions, dst=0)  # position of rank r at [r]
    if rank == 0:
        state = {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "epoch": epoch,
            "done": done,  # optimizer steps since the start of training
            "data": positions,
        }
        tmp = CHECKPOINT.with_suffix(".tmp")
        torch.save(state, tmp)
        os.replace(tmp, CHECKPOINT)  # atomic: a crash never leaves a half-written checkpoint
# --8<-- [end:save]


# --8<-- [start:load]
def load_checkpoint(model: nn.Module, optimizer: torch.optim.Optimizer,
                    loader: StatefulDataLoader, device: torch.device,
                    rank: int, world_size: int) -> tuple[int, int]:
    """Restore the last checkpoint, if any; return (epoch, done) to continue from."""
    if not CHECKPOINT.exists():
        return 0, 0
    state = torch.load(CHECKPOINT, map_location=device, weights_only=True)
    if len(state["data"]) != world_size:
        raise SystemExit(
            f"{CHECKPOINT}: saved by {len(state['data'])} ranks, this job has {world_size}; "
            f"a loader position fits only the world size that saved it: relaunch with "
            f"{len(state['data'])} processes, or move {CHECKPOINT} away to start over")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    loader.load_state_dict(state["data"][rank])  # this rank's own position
    return state["epoch"], state["done"]
# --8<-- [end:load]


# --8<-- [start:step]
def train_step(model: DDP, inputs: torch.Tensor, labels: torch.Tensor) -> float:
    """One optimizer step's backward passes; returns the step's loss per token, all ranks."""
    tokens = (labels != IGNORE).sum()
    dist.all_reduce(tokens)  # tokens of this step on every rank
    scale = dist.get_world_size() / tokens  # DDP divides the summed gradients by world size
    total = torch.zeros((), device=inputs.device)
    micro = list(zip(inputs.chunk(MICRO_BATCHES), labels.chunk(MICRO_BATCHES)))
    for i, (x, y) in enumerate(micro):
        last = i == len(micro) - 1  # only the last backward pass all-reduces
        with contextlib.nullcontext() if last else model.no_sync():
            logits = model(x)
            loss = nn.functional.cross_entropy(
                logits.flatten(0, 1), y.flatten(), ignore_index=IGNORE, reduction="sum")
            (loss * scale).backward()
        total += loss.detach()
    dist.all_reduce(total)  # for the printed loss only
    return (total / tokens).item()
# --8<-- [end:step]


def train(device: torch.device) -> None:
    rank, world_size = dist.get_rank(), dist.get_world_size()
    restart = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
    # --8<-- [start:resume]
    loader = make_loader(Sequences())
    torch.manual_seed(0)
    model = make_model().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    start_epoch, done = load_checkpoint(model, optimizer, loader, device, rank, world_size)
    ddp_model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    if rank == 0:
        print(f"restart {restart}: epoch {start_epoch}, "
              f"step {done - start_epoch * len(loader)} of {len(loader)}")
    for epoch in range(start_epoch, EPOCHS):
        loader.sampler.set_epoch(epoch)  # before iter(loader): this epoch's order
        for inputs, labels in loader:  # after a load: from the saved position on
            optimizer.zero_grad()
            loss = train_step(ddp_model, inputs.to(device), labels.to(device))
            optimizer.step()
            done += 1
            if done % SAVE_EVERY == 0 or done == EPOCHS * len(loader):
                save_checkpoint(model, optimizer, loader, epoch, done)
                if rank == 0:
                    print(f"step {done}: loss {loss:.4f} per token, checkpoint saved")
            if restart == 0 and done == STOP_AT and rank == world_size - 1:
                raise SystemExit(f"rank {rank}: stopped after step {done}, as a lost node would")
    # --8<-- [end:resume]


def main() -> None:
    device = setup()
    train(device)
    # DDP sits in reference cycles: free train()'s model now, before destroy_process_group()
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
