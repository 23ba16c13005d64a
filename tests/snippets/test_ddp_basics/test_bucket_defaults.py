"""The PyTorch facts behind docs/ddp-basics.md's bucket sizes ("What happens in
`backward()`" and "Watch DDP at work"): left unset, ``bucket_cap_mb`` is 25 MiB and the
first bucket DDP rebuilds holds only about 1 MiB; a value you pass, even 25, caps the
first bucket too, so there is no small first bucket.

One process with gloo, as in test_memory_figures.py: DDP reports the buckets it rebuilt
after the first iteration in its logging data (``rebuilt_bucket_sizes``, in bytes, in
the order they are reduced).
"""
from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

MIB = 1024 * 1024
LAYER_BYTES = (512 * 512 + 512) * 4  # one Linear(512, 512) in float32: weight and bias, 1,050,624 bytes
LAYERS = 8
FIRST_BUCKET_MIB = 1  # the page: "the first bucket to be reduced holds only about 1 MiB"


def _rebuilt_bucket_sizes(**ddp_kwargs) -> list[int]:
    """The bucket sizes DDP uses from the second iteration on, for eight 1 MiB layers."""
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    ddp = None
    try:
        torch.manual_seed(0)
        model = nn.Sequential(*[nn.Linear(512, 512) for _ in range(LAYERS)])
        ddp = DDP(model, **ddp_kwargs)
        for _ in range(3):  # DDP rebuilds its buckets at the second iteration and logs them at the third
            ddp(torch.randn(4, 512)).sum().backward()
        data = ddp._get_ddp_logging_data()
        assert data["has_rebuilt_buckets"] == 1
        return [int(size) for size in data["rebuilt_bucket_sizes"].split(",")]
    finally:
        # DDP's reducer holds the process group: freed after destroy_process_group(), the
        # group's destructor joins gloo threads that can wait forever (seen once in CI:
        # ~ProcessGroupGloo in std::thread::join under ~Reducer). Free it first, as the
        # lesson's own programs end (docs/torchrun-launching.md, "End every worker cleanly").
        ddp = None
        dist.destroy_process_group()


def test_left_unset_the_first_bucket_holds_about_1_mib_and_the_rest_up_to_25():
    sizes = _rebuilt_bucket_sizes()
    # the first bucket is filled until it holds at least FIRST_BUCKET_MIB: here one layer
    assert sizes[0] == LAYER_BYTES and sizes[0] >= FIRST_BUCKET_MIB * MIB > sizes[0] - LAYER_BYTES
    assert sizes[1:] == [(LAYERS - 1) * LAYER_BYTES]  # the other seven layers fit in one 25 MiB bucket
    assert (LAYERS - 1) * LAYER_BYTES < 25 * MIB


@pytest.mark.parametrize("bucket_cap_mb", [25])
def test_passing_even_the_default_gives_up_the_small_first_bucket(bucket_cap_mb):
    assert _rebuilt_bucket_sizes(bucket_cap_mb=bucket_cap_mb) == [LAYERS * LAYER_BYTES]
