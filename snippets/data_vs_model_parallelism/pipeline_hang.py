"""Break it: pipeline_parallel.py with one change. Stage 0 waits for each micro-batch's
gradient right after sending its activation, while stage 1 still receives every
activation before it sends any gradient back. Each stage waits for the other: the job
hangs in its first step, both ranks blocked in dist.recv.

The lesson docs/data-vs-model-parallelism.md shows this program section by section.
The launch section below is the single source of how it runs: the page shows it and the test in
tests/snippets/test_data_vs_model_parallelism/test_pipeline_hang.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 pipeline_hang.py
--8<-- [end:launch]
time-limit: 60 s
outcome: hangs
blocked-in: rank 0: dist.recv(grad, src=1)
blocked-in: rank 1: dist.recv(act, src=0)
"""

import torch
import torch.distributed as dist
from torch import nn

STEPS = 3
BATCH = 16
MICRO_BATCHES = 4  # each micro-batch holds BATCH // MICRO_BATCHES samples
HIDDEN = 32  # width of the activation sent from stage 0 to stage 1
LR = 0.05


def setup() -> torch.device:
    # gloo on the CPU, GPUs or not: this program teaches a deadlock, and NCCL would show it
    # elsewhere (its send and recv do not block Python; see the page)
    dist.init_process_group(backend="gloo")
    return torch.device("cpu")


def make_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(step)  # the same batch on every rank
    x = torch.randn(BATCH, 8, generator=generator)
    y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(BATCH, 1, generator=generator)
    return x, y


# --8<-- [start:stages]
def build_stage(index: int) -> nn.Module:
    if index == 0:  # the first half of the model's layers
        return nn.Sequential(nn.Linear(8, HIDDEN), nn.ReLU())
    return nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 1))
# --8<-- [end:stages]


# --8<-- [start:first]
def first_stage_step(stage: nn.Module, x: torch.Tensor) -> None:
    for x_micro in x.chunk(MICRO_BATCHES):
        out = stage(x_micro)
        dist.send(out.detach(), dst=1)  # activation forward to stage 1
        grad = torch.empty_like(out)
        dist.recv(grad, src=1)  # the change: wait for this micro-batch's gradient at once
        out.backward(grad)
# --8<-- [end:first]


# --8<-- [start:last]
def last_stage_step(stage: nn.Module, y: torch.Tensor, loss_fn: nn.Module) -> float:
    inputs, losses = [], []
    for y_micro in y.chunk(MICRO_BATCHES):
        act = torch.empty(len(y_micro), HIDDEN, device=y.device)
        dist.recv(act, src=0)  # activation from stage 0
        act.requires_grad_()  # so that backward() computes its gradient
        loss = loss_fn(stage(act), y_micro) / MICRO_BATCHES
        inputs.append(act)
        losses.append(loss)
    for act, loss in zip(inputs, losses):
        loss.backward()
        dist.send(act.grad, dst=0)  # gradient back to stage 0
    return sum(loss.item() for loss in losses)
# --8<-- [end:last]


def main() -> None:
    device = setup()
    rank, world_size = dist.get_rank(), dist.get_world_size()
    if world_size != 2:
        raise SystemExit(f"this pipeline has 2 stages, one per process; got {world_size} processes")

    torch.manual_seed(rank)  # reproducible initial weights for each stage
    # --8<-- [start:train]
    stage = build_stage(rank).to(device)  # each rank builds and holds its own stage only
    optimizer = torch.optim.SGD(stage.parameters(), lr=LR)
    loss_fn = nn.MSELoss()
    for step in range(STEPS):
        x, y = make_batch(step)
        optimizer.zero_grad()
        if rank == 0:
            print(f"step {step}: stage 0 starts", flush=True)  # the last line before the hang
            first_stage_step(stage, x.to(device))
        else:
            loss = last_stage_step(stage, y.to(device), loss_fn)
            print(f"step {step}: loss {loss:.4f}")
        optimizer.step()  # each rank updates the parameters of its own stage
    # --8<-- [end:train]

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
