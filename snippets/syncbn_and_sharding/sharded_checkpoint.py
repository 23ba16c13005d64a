"""Save and load sharded state with torch.distributed.checkpoint: every process writes
and reads only its own shards of the model and the optimizer.

The lesson docs/syncbn-and-sharding.md shows this program section by section. The
launch section below is the single source of how it runs: the page shows it and the
test in tests/snippets/test_syncbn_and_sharding/test_sharded_checkpoint.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 sharded_checkpoint.py
--8<-- [end:launch]
time-limit: 60 s
"""
import os

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.fsdp import fully_shard

STEPS = 4
BATCH_SIZE = 16  # per process
LR = 0.01
CHECKPOINT_DIR = "checkpoint"


def setup() -> torch.device:
    local_rank = int(os.environ["LOCAL_RANK"])  # set by torchrun
    if torch.cuda.is_available():
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        dist.init_process_group(backend="nccl")
    else:
        device = torch.device("cpu")
        dist.init_process_group(backend="gloo")
    return device


def make_model() -> nn.Sequential:
    blocks = [nn.Sequential(nn.Linear(16 if i == 0 else 64, 64), nn.ReLU()) for i in range(3)]
    return nn.Sequential(*blocks, nn.Linear(64, 1))


def build(device: torch.device, seed: int) -> tuple[nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(seed)
    model = make_model().to(device)
    for block in model[:-1]:
        fully_shard(block)
    fully_shard(model)
    return model, torch.optim.Adam(model.parameters(), lr=LR)


def train(model: nn.Module, optimizer: torch.optim.Optimizer, device: torch.device) -> None:
    generator = torch.Generator().manual_seed(dist.get_rank())  # each rank its own data
    for _ in range(STEPS):
        x = torch.randn(BATCH_SIZE, 16, generator=generator).to(device)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True))
        loss.backward()
        optimizer.step()


def main() -> None:
    device = setup()
    rank = dist.get_rank()

    model, optimizer = build(device, seed=0)
    train(model, optimizer, device)

    # --8<-- [start:save]
    model_state, optim_state = get_state_dict(model, optimizer)  # sharded: no gathering
    dcp.save({"model": model_state, "optimizer": optim_state}, checkpoint_id=CHECKPOINT_DIR)
    # --8<-- [end:save]
    if rank == 0:
        print(f"saved: {sorted(os.listdir(CHECKPOINT_DIR))}")

    # --8<-- [start:load]
    model, optimizer = build(device, seed=1)  # a fresh start, as after a restart
    model_state, optim_state = get_state_dict(model, optimizer)
    state = {"model": model_state, "optimizer": optim_state}
    dcp.load(state, checkpoint_id=CHECKPOINT_DIR)  # fills the shards in place
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optimizer"])
    # --8<-- [end:load]
    step = optimizer.state_dict()["state"][0]["step"]
    print(f"rank {rank} restored its shards at step {int(step)}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
