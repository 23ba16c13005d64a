"""The PyTorch fact behind docs/ddp-basics.md's rule for micro-batches of different sizes
("Accumulate gradients"): dividing each micro-batch's mean loss by the number of
micro-batches gives the mean over the large batch only when every micro-batch on every
rank holds as many tokens; otherwise, sum the loss over the tokens and divide by the
all-reduced token count of the step, times the world size, because DDP divides the summed
gradients by the world size.

Two processes with gloo, forked with ``torch.multiprocessing`` (run with plain
``python``, never inside torchrun: shared/TORCH-FACTS.md); each returns its gradient
through a queue, to be compared with one process's per-token mean over every token.
"""
from __future__ import annotations

import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

WORLD = 2
TOKENS = [[3, 9], [5, 1]]  # tokens per micro-batch, per rank: no two alike


def _data(rank: int, micro: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(10 * rank + micro)
    x = torch.randn(TOKENS[rank][micro], 4, generator=g)
    return x, x.sum(dim=1, keepdim=True)


def _worker(rank: int, port: int, rule: str, queue) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    torch.manual_seed(0)
    model = DDP(nn.Linear(4, 1))
    count = torch.tensor(float(sum(TOKENS[rank])))
    dist.all_reduce(count)  # every token of the step, on every rank
    micro_batches = len(TOKENS[rank])
    for micro in range(micro_batches):
        x, y = _data(rank, micro)
        if rule == "per token":
            loss = nn.functional.mse_loss(model(x), y, reduction="sum") / count * WORLD
        else:
            loss = nn.functional.mse_loss(model(x), y) / micro_batches
        if micro < micro_batches - 1:
            with model.no_sync():
                loss.backward()
        else:
            loss.backward()
    queue.put((rank, model.module.weight.grad.tolist()))  # plain values: the process ends next
    del model
    dist.destroy_process_group()


def _ddp_grad(rule: str) -> torch.Tensor:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("fork")  # the workers run this module's function as it is
    queue = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(r, port, rule, queue)) for r in range(WORLD)]
    for p in procs:
        p.start()
    grads = {rank: torch.tensor(grad) for rank, grad in (queue.get(timeout=120) for _ in procs)}
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    torch.testing.assert_close(grads[0], grads[1])  # DDP: every rank the same
    return grads[0]


def _one_process_per_token_mean() -> torch.Tensor:
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    x, y = (torch.cat(t) for t in zip(*[_data(r, m) for r in range(WORLD) for m in range(len(TOKENS[r]))]))
    nn.functional.mse_loss(model(x), y).backward()
    return model.weight.grad


def test_per_token_normalisation_gives_the_mean_over_every_token():
    torch.testing.assert_close(_ddp_grad("per token"), _one_process_per_token_mean())


def test_dividing_by_the_number_of_micro_batches_does_not_when_their_sizes_differ():
    assert not torch.allclose(_ddp_grad("per micro-batch"), _one_process_per_token_mean(), rtol=1e-3)
