"""Pipeline parallelism with torch.distributed.pipelining: the two stages of
pipeline_parallel.py wrapped in PipelineStage and run by the GPipe and 1F1B schedules,
which do the sends and receives; each stage notes the order it ran its micro-batches in,
and rank 0 replays those orders on a clock to show the pipeline bubble.

The lesson docs/data-vs-model-parallelism.md shows this program section by section.
The launch section below is the single source of how it runs: the page shows it and the test in
tests/snippets/test_data_vs_model_parallelism/test_pipeline_schedules.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 pipeline_schedules.py
--8<-- [end:launch]
time-limit: 120 s
"""
import os
import sys
from fractions import Fraction

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

BATCH = 16
MICRO_BATCHES = 4  # each micro-batch holds BATCH // MICRO_BATCHES samples
HIDDEN = 32  # width of the activation sent from stage 0 to stage 1
LR = 0.05


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


def make_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(step)  # the same batch on every rank
    x = torch.randn(BATCH, 8, generator=generator)
    y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(BATCH, 1, generator=generator)
    return x, y


def build_stage(index: int) -> nn.Module:
    if index == 0:  # the first half of the model's layers
        return nn.Sequential(nn.Linear(8, HIDDEN), nn.ReLU())
    return nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 1))


# --8<-- [start:logged]
class LoggedStage(PipelineStage):
    """A PipelineStage that notes each micro-batch's forward (F) and backward (B) pass
    in the order its schedule runs them."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.actions: list[str] = []

    def forward_one_chunk(self, chunk_id: int, *args, **kwargs):
        self.actions.append(f"F{chunk_id}")
        return super().forward_one_chunk(chunk_id, *args, **kwargs)

    def backward_one_chunk(self, chunk_id: int, *args, **kwargs):
        self.actions.append(f"B{chunk_id}")
        return super().backward_one_chunk(chunk_id, *args, **kwargs)
# --8<-- [end:logged]


# --8<-- [start:timeline]
def timeline(orders: list[list[str]]) -> list[list[str]]:
    """Replay each stage's actions on a clock, one time unit per action: a forward waits
    for the previous stage's forward of the same micro-batch, a backward for the next
    stage's backward of it. Returns each stage's row, "--" where it waits."""
    last = len(orders) - 1
    pending = [list(order) for order in orders]
    finished: dict[tuple[int, str], int] = {}  # (stage, action) -> time unit it ran in
    rows: list[list[str]] = [[] for _ in orders]
    t = 0
    while any(pending):
        for s, todo in enumerate(pending):
            action = todo[0] if todo else None
            if action is not None:
                needs = s - 1 if action[0] == "F" else s + 1  # the neighbour it waits for
                # done in an earlier unit
                ready = not 0 <= needs <= last or finished.get((needs, action), t) < t
                if ready:
                    finished[(s, action)] = t
                    rows[s].append(todo.pop(0))
                    continue
            rows[s].append("--")
        t += 1
    return rows


def most_in_flight(order: list[str]) -> int:
    """The most micro-batches whose forward has run and backward has not: whose
    activations the stage keeps at once."""
    count = most = 0
    for action in order:
        count += 1 if action[0] == "F" else -1
        most = max(most, count)
    return most
# --8<-- [end:timeline]


def main() -> None:
    device = setup()
    rank, world_size = dist.get_rank(), dist.get_world_size()
    if world_size != 2:
        raise SystemExit(f"this pipeline has 2 stages, one per process; got {world_size} processes")

    torch.manual_seed(rank)  # reproducible initial weights for each stage
    # --8<-- [start:stage]
    module = build_stage(rank).to(device)  # each rank builds and holds its own stage only
    stage = LoggedStage(module, stage_index=rank, num_stages=world_size, device=device)
    optimizer = torch.optim.SGD(module.parameters(), lr=LR)
    # --8<-- [end:stage]

    # --8<-- [start:train]
    for step, Schedule in enumerate((ScheduleGPipe, Schedule1F1B)):
        schedule = Schedule(stage, n_microbatches=MICRO_BATCHES, loss_fn=nn.MSELoss())
        x, y = make_batch(step)
        optimizer.zero_grad()
        stage.actions.clear()
        if rank == 0:
            schedule.step(x.to(device))  # the first stage feeds the input
        else:
            losses = []  # the last stage gets the target and one loss per micro-batch
            schedule.step(target=y.to(device), losses=losses)
            print(f"{Schedule.__name__}: loss {torch.stack(losses).mean().item():.4f}")
        optimizer.step()
        # --8<-- [end:train]

        # --8<-- [start:bubble]
        orders = [None] * world_size
        dist.all_gather_object(orders, stage.actions)  # every stage's order, on every rank
        if rank == 0:
            rows = timeline(orders)
            for s, row in enumerate(rows):
                print(f"{Schedule.__name__} stage {s}: {' '.join(f'{a:>2}' for a in row)}")
            bubble = Fraction(rows[0].count("--"), len(rows[0]))
            print(f"{Schedule.__name__}: bubble {bubble} of each stage's time, "
                  f"at most {most_in_flight(orders[0])} micro-batches in flight on stage 0")
        # --8<-- [end:bubble]

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
