"""Gradient compression with DDP communication hooks: fp16_compress_hook and PowerSGD.

Trains the same model from the same start on the same batches once per hook. At every
step a second DDP model without a hook, loaded with the same weights, gives the exact
average gradient, and the program prints how far the hook's gradient is from it, and
how many values each rank all-reduces per step. Then it shows a gradient too large for
float16 on one rank going through fp16_compress_hook.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 compression_hooks.py
--8<-- [end:launch]
time-limit: 120 s
"""
import gc
import os
import sys
from collections.abc import Callable

import torch
import torch.distributed as dist
# imported before any process group exists: lesson 4, "End every worker cleanly"
import torch.distributed.nn  # noqa: F401
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as powerSGD
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS = 6
BATCH = 32  # samples per step and process
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


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1)
    )


def make_batch(rank: int, step: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """This rank's batch of one step: the same on every run, different on every rank."""
    generator = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randn(BATCH, 32, generator=generator)
    y = x[:, :4].sum(dim=1, keepdim=True)
    return x.to(device), y.to(device)


def flat_grad(model: nn.Module) -> torch.Tensor:
    """Every parameter's .grad, flattened into one 1-D tensor."""
    return torch.cat([p.grad.flatten() for p in model.parameters()])


def percent(errors: list[float]) -> str:
    """Fractions as percentages with two significant digits."""
    return " ".join(f"{100 * e:.2g}%" for e in errors)


def train(device: torch.device, hook: Callable, state: object) -> list[float]:
    """STEPS steps with ``hook`` (a DDP communication hook, registered with its ``state``);
    each step's distance from the exact average gradient, relative to that gradient's norm."""
    ids = [device.index] if device.type == "cuda" else None
    # --8<-- [start:train]
    torch.manual_seed(0)
    model = DDP(make_model().to(device), device_ids=ids)
    model.register_comm_hook(state, hook)
    exact = DDP(make_model().to(device), device_ids=ids)  # no hook: the plain all-reduce
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    errors = []
    for step in range(STEPS):
        x, y = make_batch(dist.get_rank(), step, device)
        exact.module.load_state_dict(model.module.state_dict())  # the same weights
        exact.zero_grad()
        nn.functional.mse_loss(exact(x), y).backward()
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        wrong = (flat_grad(model) - flat_grad(exact)).norm() / flat_grad(exact).norm()
        errors.append(wrong.item())
        optimizer.step()
    # --8<-- [end:train]
    return errors


def fp16_arrives(device: torch.device, value: float) -> float:
    """What fp16_compress_hook makes of a gradient of ``value`` on rank 0 and 0 elsewhere."""
    ids = [device.index] if device.type == "cuda" else None
    # --8<-- [start:overflow]
    model = DDP(nn.Linear(1, 1, bias=False).to(device), device_ids=ids)
    model.register_comm_hook(None, default_hooks.fp16_compress_hook)
    x = torch.full((1, 1), value if dist.get_rank() == 0 else 0.0, device=device)
    model(x).sum().backward()  # the weight's gradient is x
    # --8<-- [end:overflow]
    return model.module.weight.grad.item()


def main() -> None:
    device = setup()
    rank = dist.get_rank()
    numel = sum(p.numel() for p in make_model().parameters())

    # --8<-- [start:fp16]
    errors = train(device, default_hooks.fp16_compress_hook, None)
    # --8<-- [end:fp16]
    if rank == 0:
        print(f"fp16_compress_hook: sends {numel:,} values a step in float16, not float32")
        print(f"  error of each step's gradient: {percent(errors)}")
    big = fp16_arrives(device, 100_000.0)
    if rank == 0:
        print(f"fp16_compress_hook: 100,000 on rank 0, 0 on rank 1: the average arrives as {big}")

    # --8<-- [start:powersgd]
    state = powerSGD.PowerSGDState(
        process_group=None,  # the default process group
        matrix_approximation_rank=1,  # r: a matrix is sent as P (rows x r), Q (columns x r)
        start_powerSGD_iter=2,  # the plain all-reduce for the first two steps
    )
    errors = train(device, powerSGD.powerSGD_hook, state)
    # --8<-- [end:powersgd]
    rate, before, after = state.compression_stats()  # totals over the compressed steps
    if rank == 0:
        steps = STEPS - state.start_powerSGD_iter
        start = state.start_powerSGD_iter
        print(f"powerSGD_hook: sends {after // steps:,} values a step"
              f" for {before // steps:,} from step {start} on ({rate:.1f}x fewer)")
        print(f"  error of each step's gradient: {percent(errors)}")

    # PowerSGD's callbacks run on gloo's threads and hold the process group until they
    # are let go; the barrier waits for all earlier work, so none is left to free it there
    dist.barrier()
    gc.collect()  # DDP sits in reference cycles: free it now, before destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
