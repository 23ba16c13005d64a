"""Recorder for the programs of docs/torchrun-launching.md (never published).

Loaded in every worker by ``sitecustomize`` when the test passes
``plugins=("record_torchrun_launching",)``. It watches how a program ends, through public
PyTorch entry points, and fills ``RECORD["extra"]["teardown"]``:

* ``shutdowns``: how many times ``ProcessGroup.shutdown`` ran, in all;
* ``during_destroy``: how many of those ran inside ``dist.destroy_process_group``;
* ``initialized_after``: ``dist.is_initialized()`` right after ``destroy_process_group``
  returned.

and ``RECORD["extra"]["reads"]``: every batch a DataLoader (or torchdata's
StatefulDataLoader, which fetches through the same class) read from a map-style dataset,
in order, as ``(epoch, [indices])``, where ``epoch`` is that of the latest pass over a
``DistributedSampler`` (``sitecustomize``'s ``sampler_epochs``; None before any); and
``RECORD["extra"]["ddp_syncs"]``: for every forward pass of a DDP module, in order,
whether the backward pass after it will all-reduce (``require_backward_grad_sync``, which
``DistributedDataParallel.no_sync()`` sets to False and DDP's forward reads).

Every wrapper calls the original with the same arguments and returns its result.
"""
from __future__ import annotations

import torch.distributed as dist
from torch._C._distributed_c10d import ProcessGroup
from torch.nn.modules.module import register_module_forward_pre_hook
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data._utils.fetch import _MapDatasetFetcher

from sitecustomize import RECORD

TEARDOWN = RECORD["extra"]["teardown"] = {
    "shutdowns": 0, "during_destroy": 0, "initialized_after": None,
}
_in_destroy = False
_shutdown = ProcessGroup.shutdown


def _recording_shutdown(self, *args, **kwargs):
    TEARDOWN["shutdowns"] += 1
    if _in_destroy:
        TEARDOWN["during_destroy"] += 1
    return _shutdown(self, *args, **kwargs)


ProcessGroup.shutdown = _recording_shutdown

_destroy = dist.destroy_process_group  # sitecustomize's wrapper, which calls torch's


def _recording_destroy(*args, **kwargs):
    global _in_destroy
    _in_destroy = True
    try:
        return _destroy(*args, **kwargs)
    finally:
        _in_destroy = False
        TEARDOWN["initialized_after"] = dist.is_initialized()


dist.destroy_process_group = _recording_destroy

READS = RECORD["extra"]["reads"] = []
_fetch = _MapDatasetFetcher.fetch


def _recording_fetch(self, possibly_batched_index):
    batch = possibly_batched_index if isinstance(possibly_batched_index, (list, tuple)) else [possibly_batched_index]
    passes = RECORD["sampler_epochs"]  # the sampler's pass that handed out these indices is the latest
    READS.append((passes[-1][0] if passes else None, [int(i) for i in batch]))
    return _fetch(self, possibly_batched_index)


_MapDatasetFetcher.fetch = _recording_fetch

SYNCS = RECORD["extra"]["ddp_syncs"] = []


def _on_forward(module, args):
    if isinstance(module, DistributedDataParallel):
        SYNCS.append(bool(module.require_backward_grad_sync))


register_module_forward_pre_hook(_on_forward)
