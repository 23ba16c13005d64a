"""Interleaved pipeline schedules: four one-layer stages on two ranks, two stages each,
run by ScheduleInterleaved1F1B with 1 to 4 micro-batches and by
ScheduleInterleavedZeroBubble with 4; each rank notes the order it ran its passes in, and
rank 0 replays those orders on a clock to show each schedule's bubble.

The lesson docs/data-vs-model-parallelism.md shows this program section by section; the
test in tests/snippets/test_data_vs_model_parallelism/test_pipeline_interleaved.py runs
exactly the command below.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 pipeline_interleaved.py
--8<-- [end:launch]
time-limit: 120 s
"""
import os
import sys
from fractions import Fraction

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.pipelining import (
    PipelineStage,
    ScheduleInterleaved1F1B,
    ScheduleInterleavedZeroBubble,
)

BATCH = 12  # divisible by every number of micro-batches below
HIDDEN = 32
LR = 0.05
STAGES = 4  # one layer each; rank r holds stages r and r + world size
RUNS = [  # (schedule, micro-batches): one training step each
    (ScheduleInterleaved1F1B, 1),
    (ScheduleInterleaved1F1B, 2),
    (ScheduleInterleaved1F1B, 3),
    (ScheduleInterleaved1F1B, 4),
    (ScheduleInterleavedZeroBubble, 4),
]
COST = {"F": 1, "B": 2, "I": 1, "W": 1}  # clock units of one layer's pass (see the lesson)


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
    """Stage ``index`` of the four: one linear layer each."""
    if index == 0:
        return nn.Sequential(nn.Linear(8, HIDDEN), nn.ReLU())
    if index == STAGES - 1:
        return nn.Linear(HIDDEN, 1)
    return nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.ReLU())


# --8<-- [start:logged]
class LoggedStage(PipelineStage):
    """A PipelineStage that notes, in the list it shares with the rank's other stage,
    each pass it runs: F (forward), B (full backward), or, when a zero-bubble schedule
    splits the backward pass, I (gradient of the input) and W (gradient of the weights)."""

    def __init__(self, *args, log: list[tuple[str, int, int]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.log = log  # (pass, stage, micro-batch)

    def forward_one_chunk(self, chunk_id: int, *args, **kwargs):
        self.log.append(("F", self.stage_index, chunk_id))
        return super().forward_one_chunk(chunk_id, *args, **kwargs)

    def backward_one_chunk(self, chunk_id: int, *args, full_backward: bool = True, **kwargs):
        self.log.append(("B" if full_backward else "I", self.stage_index, chunk_id))
        return super().backward_one_chunk(chunk_id, *args, full_backward=full_backward, **kwargs)

    def backward_weight_one_chunk(self, chunk_id: int, *args, **kwargs):
        self.log.append(("W", self.stage_index, chunk_id))
        return super().backward_weight_one_chunk(chunk_id, *args, **kwargs)
# --8<-- [end:logged]


# --8<-- [start:timeline]
def timeline(orders: list[list[tuple[str, int, int]]]) -> list[list[str]]:
    """Replay each rank's passes on a clock, one at a time, each taking COST units: a
    forward waits for the previous stage's forward of the same micro-batch, a backward (B
    or I) for the next stage's, a W for its own I. Returns each rank's row, one cell per
    unit: the pass and micro-batch, in lower case on the rank's second stage; "--" idle."""
    ends: dict[tuple[str, int, int], int] = {}  # (pass, stage, micro-batch) -> its end
    rows: list[list[str]] = [[] for _ in orders]
    todo = [list(order) for order in orders]
    while any(todo):
        waiting = sum(map(len, todo))
        for rank, passes in enumerate(todo):
            if not passes:
                continue
            kind, stage, micro = passes[0]
            if kind == "F":
                needs = [("F", stage - 1, micro)] if stage > 0 else []
            elif kind == "W":
                needs = [("I", stage, micro)]
            elif stage < STAGES - 1:
                needs = [(k, stage + 1, micro) for k in "BI" if (k, stage + 1, micro) in ends]
                needs = needs or [("B", stage + 1, micro)]
            else:
                needs = []
            if any(n not in ends for n in needs):
                continue  # its input is not computed yet, by any time
            start = max([len(rows[rank]), *(ends[n] for n in needs)])
            cell = f"{kind}{micro}" if stage < len(orders) else f"{kind.lower()}{micro}"
            rows[rank] += ["--"] * (start - len(rows[rank])) + [cell] * COST[kind]
            ends[passes.pop(0)] = len(rows[rank])
        if sum(map(len, todo)) == waiting:
            raise RuntimeError(f"no pass can run: {[passes[0] for passes in todo if passes]}")
    span = max(len(row) for row in rows)
    return [row + ["--"] * (span - len(row)) for row in rows]


def most_in_flight(order: list[tuple[str, int, int]]) -> int:
    """The most forward passes of a rank whose backward has not run yet: whose
    activations the rank keeps at once (each one a stage's, half the rank's layers)."""
    count = most = 0
    for kind, _, _ in order:
        count += {"F": 1, "B": -1, "I": -1}.get(kind, 0)
        most = max(most, count)
    return most
# --8<-- [end:timeline]


def main() -> None:
    device = setup()
    rank, world_size = dist.get_rank(), dist.get_world_size()
    if world_size != 2:
        raise SystemExit(f"this pipeline puts two of its 4 stages on each of 2 processes; "
                         f"got {world_size} processes")

    # --8<-- [start:stages]
    log: list[tuple[str, int, int]] = []
    indices = [rank, rank + world_size]  # rank 0: stages 0 and 2; rank 1: stages 1 and 3
    modules = []
    for index in indices:
        torch.manual_seed(index)  # reproducible initial weights for each stage
        modules.append(build_stage(index).to(device))
    stages = [LoggedStage(module, stage_index=index, num_stages=STAGES, device=device, log=log)
              for module, index in zip(modules, indices)]
    params = [p for module in modules for p in module.parameters()]
    optimizer = torch.optim.SGD(params, lr=LR)
    # --8<-- [end:stages]

    for step, (Schedule, micro_batches) in enumerate(RUNS):
        # --8<-- [start:train]
        schedule = Schedule(stages, n_microbatches=micro_batches, loss_fn=nn.MSELoss())
        x, y = make_batch(step)
        optimizer.zero_grad()
        log.clear()
        if rank == 0:  # holds stage 0, which feeds the input
            schedule.step(x.to(device))
        else:  # holds stage 3, the last, which gets the target and the losses
            losses = []
            schedule.step(target=y.to(device), losses=losses)
        optimizer.step()
        # --8<-- [end:train]

        # --8<-- [start:bubble]
        orders = [None] * world_size
        dist.all_gather_object(orders, log)  # every rank's order, on every rank
        if rank == 0:
            rows = timeline(orders)
            name = f"{Schedule.__name__}, m={micro_batches}"
            if micro_batches == max(m for _, m in RUNS):
                print(f"{name}:")
                for r, row in enumerate(rows):
                    print(f"  rank {r}: {' '.join(row)}")
            bubble = Fraction(rows[0].count("--"), len(rows[0]))
            print(f"{name}: bubble {bubble} ({rows[0].count('--')} of {len(rows[0])} units), "
                  f"at most {most_in_flight(orders[0])} forward passes in flight on rank 0")
        # --8<-- [end:bubble]

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
