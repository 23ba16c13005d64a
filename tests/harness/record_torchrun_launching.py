"""Recorder for the programs of docs/torchrun-launching.md (never published).

Loaded in every worker by ``sitecustomize`` when the test passes
``plugins=("record_torchrun_launching",)``. It watches how a program ends, through public
PyTorch entry points, and fills ``RECORD["extra"]["teardown"]``:

* ``shutdowns``: how many times ``ProcessGroup.shutdown`` ran, in all;
* ``during_destroy``: how many of those ran inside ``dist.destroy_process_group``;
* ``initialized_after``: ``dist.is_initialized()`` right after ``destroy_process_group``
  returned.

Every wrapper calls the original with the same arguments and returns its result.
"""
from __future__ import annotations

import torch.distributed as dist
from torch._C._distributed_c10d import ProcessGroup

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
