"""The PyTorch fact behind docs/syncbn-and-sharding.md's buffer copies ("Small batches make
BatchNorm noisy"): DDP copies rank 0's buffers at the start of a forward pass if the
forward pass before it ran with gradients enabled and outside ``no_sync()``, and at the
very first forward pass. So: every step of a plain training loop; only the first of
several ``no_grad`` evaluation batches, and not the first training step after them; only
the first micro-batch of a step accumulated with ``no_sync()``, not the last, synchronized
one.

Where it comes from (torch 2.13, ``torch/nn/parallel/distributed.py``): ``_post_forward``
sets ``require_forward_param_sync`` after each forward pass to
``torch.is_grad_enabled() and self.require_backward_grad_sync``; ``_pre_forward`` syncs the
buffers if ``will_sync_module_buffers()``, which reads that flag; ``no_sync()`` clears
``require_backward_grad_sync``; ``__init__`` sets the flag to True.

One process with gloo, as in test_bucket_defaults.py: every call of
``dist._broadcast_coalesced`` after DDP's construction is one buffer copy (the harness
counts the same function in bn_under_ddp.py's job, tests/harness/README.md).
"""
from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

# (forward pass, buffer copies DDP makes at its start), in the order they run
EXPECTED = [
    ("train", 1),  # the very first forward pass
    ("train", 1),
    ("eval", 1),  # the first no_grad batch: the forward before it was a training one
    ("eval", 0),
    ("train after eval", 0),  # the forward before it ran without gradients
    ("train", 1),
    ("micro-batch 1, no_sync", 1),
    ("micro-batch 2, no_sync", 0),
    ("micro-batch 3, synced", 0),  # the last micro-batch of the step: the one before ran inside no_sync()
    ("next step's micro-batch 1, no_sync", 1),
    ("micro-batch 2, synced", 0),
    # grad mode decides, not train()/eval() (the mutant that keys the copy on the module's
    # training flag passes the sequence above, not this one)
    ("train mode, no_grad", 1),  # the one before ran with gradients, outside no_sync()
    ("eval mode, with gradients", 0),  # the one before ran under no_grad, in training mode
    ("eval mode, with gradients", 1),  # the one before ran with gradients, in evaluation mode
]


@pytest.fixture
def copies(monkeypatch):
    """A list that gets one entry per ``dist._broadcast_coalesced`` call."""
    calls: list[int] = []
    original = dist._broadcast_coalesced

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(dist, "_broadcast_coalesced", counting)
    return calls


def test_ddp_copies_buffers_before_a_forward_pass_only_if_the_one_before_ran_with_gradients_outside_no_sync(copies):
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    ddp = None
    try:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
        ddp = DDP(model)
        assert len(copies) == 1  # the construction's broadcast of parameters and buffers
        seen: list[tuple[str, int]] = []

        def forward(name: str, grad: bool = True) -> None:
            before = len(copies)
            x = torch.randn(8, 4)
            if grad:
                ddp(x).pow(2).mean().backward()
            else:
                with torch.no_grad():
                    ddp(x)
            seen.append((name, len(copies) - before))

        forward("train")
        forward("train")
        ddp.eval()
        forward("eval", grad=False)
        forward("eval", grad=False)
        ddp.train()
        forward("train after eval")
        forward("train")
        with ddp.no_sync():
            forward("micro-batch 1, no_sync")
            forward("micro-batch 2, no_sync")
        forward("micro-batch 3, synced")
        with ddp.no_sync():
            forward("next step's micro-batch 1, no_sync")
        forward("micro-batch 2, synced")
        forward("train mode, no_grad", grad=False)
        ddp.eval()
        forward("eval mode, with gradients")
        forward("eval mode, with gradients")
        assert seen == EXPECTED
    finally:
        ddp = None  # DDP's reducer holds the group: free it before destroying it (test_bucket_defaults.py)
        dist.destroy_process_group()
