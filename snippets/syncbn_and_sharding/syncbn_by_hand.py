"""What SyncBatchNorm computes, written with one all-reduce: per-channel mean and variance
over the batches of all processes, even when the processes hold different numbers of
samples, and input gradients that account for the losses of all processes.

The lesson docs/syncbn-and-sharding.md shows this program section by section. The
launch section below is the single source of how it runs: the page shows it and the
test in tests/snippets/test_syncbn_and_sharding/test_syncbn_by_hand.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 syncbn_by_hand.py
--8<-- [end:launch]
time-limit: 180 s
"""
import os
import sys

import torch
import torch.distributed as dist
from torch import nn

CHANNELS = 3


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


def make_local_batch(rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A different, differently sized batch of images and targets on every rank."""
    generator = torch.Generator().manual_seed(rank)
    n_samples = 3 + 2 * rank
    x = torch.randn(n_samples, CHANNELS, 4, 4, generator=generator) * (1 + rank) + rank
    target = torch.randn(n_samples, CHANNELS, 4, 4, generator=generator)
    return x, target


# --8<-- [start:stats]
class AllReduceSum(torch.autograd.Function):
    """The sum over all ranks, as a step autograd can differentiate."""

    @staticmethod
    def forward(ctx, tensor: torch.Tensor) -> torch.Tensor:
        total = tensor.clone()
        dist.all_reduce(total)
        return total

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        grad = grad.clone()
        dist.all_reduce(grad)  # every rank's loss depends on the sum: add up their gradients
        return grad


def global_batch_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-channel mean and (biased) variance over the batches of all ranks, and their size."""
    dims = [d for d in range(x.dim()) if d != 1]  # every dimension but the channels
    count = torch.tensor([x.numel() // x.size(1)], dtype=x.dtype, device=x.device)
    stats = torch.cat([x.sum(dims), (x * x).sum(dims), count])
    stats = AllReduceSum.apply(stats)  # sums, sums of squares and counts of all ranks, in one call
    total, total_sq, n = stats.split([x.size(1), x.size(1), 1])
    mean = total / n
    var = total_sq / n - mean * mean
    return mean, var, n
# --8<-- [end:stats]


# --8<-- [start:layer]
class SyncBatchNormByHand(nn.BatchNorm2d):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return super().forward(x)  # evaluation uses the running statistics
        mean, var, n = global_batch_stats(x)
        with torch.no_grad():  # running statistics store the unbiased variance
            self.running_mean.lerp_(mean, self.momentum)
            self.running_var.lerp_(var * n / (n - 1), self.momentum)
            self.num_batches_tracked += 1
        shape = (1, -1, 1, 1)
        x_hat = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + self.eps)
        return x_hat * self.weight.view(shape) + self.bias.view(shape)
# --8<-- [end:layer]


def main() -> None:
    device = setup()
    rank = dist.get_rank()

    # --8<-- [start:run]
    x, target = make_local_batch(rank)
    x, target = x.to(device), target.to(device)
    mean, var, n = global_batch_stats(x)
    local_mean = x.mean(dim=(0, 2, 3))
    print(f"rank {rank}: values per channel: local {x.numel() // CHANNELS}, global {int(n)}; "
          f"mean of channel 0: local {local_mean[0]:.3f}, global {mean[0]:.3f}")

    norm = SyncBatchNormByHand(CHANNELS).to(device)
    x.requires_grad_()  # to see the gradient that reaches this rank's input
    y = norm(x)  # normalized with the statistics of the global batch
    loss = nn.functional.mse_loss(y, target, reduction="sum")  # this rank's part of the loss
    loss.backward()  # AllReduceSum.backward adds up the gradients of all ranks
    print(f"rank {rank}: loss {loss:.3f}; norm of the input's gradient {x.grad.norm():.4f}")
    # --8<-- [end:run]

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
