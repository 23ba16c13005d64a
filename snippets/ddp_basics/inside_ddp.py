"""Make visible what DistributedDataParallel does when it wraps a model and in backward.

Every rank starts from different weights on purpose; DDP's constructor makes them equal.
A communication hook prints each gradient bucket's all-reduce as it is launched, with
how many gradients backward still had to compute at that moment.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 inside_ddp.py
--8<-- [end:launch]
time-limit: 120 s
"""
import gc
import os
import sys

import torch
import torch.distributed as dist
# imported before any process group exists: lesson 4, "End every worker cleanly"
import torch.distributed.nn  # noqa: F401
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP

LAYERS = 4
WIDTH = 64  # one Linear(64, 64) has 4,160 parameters: 16,640 bytes of fp32 gradients
BUCKET_CAP_MB = 0.01  # about 10,000 bytes, so each layer's gradients fill a bucket
STEPS = 3


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


def main() -> None:
    device = setup()
    rank = dist.get_rank()

    # --8<-- [start:wrap]
    torch.manual_seed(rank)  # on purpose: every rank builds different weights
    model = nn.Sequential(*(nn.Linear(WIDTH, WIDTH) for _ in range(LAYERS))).to(device)
    before = model[0].weight[0, 0].item()
    ddp_model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None,
                    bucket_cap_mb=BUCKET_CAP_MB)
    after = model[0].weight[0, 0].item()
    # --8<-- [end:wrap]
    seen = [None] * dist.get_world_size()
    dist.all_gather_object(seen, (before, after))  # every rank's view, printed by rank 0
    if rank == 0:
        for r, (was, now) in enumerate(seen):
            print(f"rank {r}: weight[0, 0] {was:+.4f} before wrapping, {now:+.4f} after")

    # --8<-- [start:hook]
    names = {p: name for name, p in model.named_parameters()}
    launched = []  # (bucket index, its parameters, gradients backward had not computed yet)

    def traced_allreduce(state, bucket):
        pending = sum(p.grad is None for p in model.parameters())
        launched.append((bucket.index(), [names[p] for p in bucket.parameters()], pending))
        return default_hooks.allreduce_hook(state, bucket)  # what DDP does without a hook

    ddp_model.register_comm_hook(None, traced_allreduce)
    # --8<-- [end:hook]

    # --8<-- [start:steps]
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(rank)  # each rank its own batches
    n_params = len(list(model.parameters()))
    for step in range(STEPS):
        x = torch.randn(8, WIDTH, generator=generator).to(device)
        optimizer.zero_grad()  # every .grad is None again
        ddp_model(x).square().mean().backward()
        if rank == 0:
            for index, params, pending in launched:
                print(f"step {step}: bucket {index} ({', '.join(params)}) launched "
                      f"with {pending} of {n_params} gradients still to compute")
        launched.clear()
        optimizer.step()
    # --8<-- [end:steps]

    del ddp_model  # the DDP model holds the process group
    gc.collect()  # DDP sits in reference cycles: free it now, before destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
