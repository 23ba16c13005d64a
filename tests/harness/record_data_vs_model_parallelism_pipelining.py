"""Recorder for the torch.distributed.pipelining program of docs/data-vs-model-parallelism.md
(never published).

A recorder of its own, loaded only for the pipelining program. Its wrappers are put in
place when the program imports ``torch.distributed.pipelining``, never before
(``sitecustomize.after_import``). Loaded in every worker by ``sitecustomize`` when the
test passes
``plugins=("record_data_vs_model_parallelism_pipelining",)``; it fills
``RECORD["extra"]``:

* ``pp_actions``: every call of a pipeline stage's ``forward_one_chunk`` and
  ``backward_one_chunk`` (``torch/distributed/pipelining/stage.py``, the methods a
  schedule calls once per micro-batch), in call order, as ``"F<micro-batch>"`` /
  ``"B<micro-batch>"``;
* ``pp_steps``: every ``step`` of a single-stage schedule (``PipelineScheduleSingle``,
  the base of ``ScheduleGPipe`` and ``Schedule1F1B``): the schedule's class name, its
  number of micro-batches, the whole-batch input and target it was given, and the
  per-micro-batch losses it put in the caller's ``losses`` list (None when the caller
  passed none), read after the call.

The wrappers call the original with the same arguments and return its result.
"""
from __future__ import annotations

from sitecustomize import RECORD, wrap_after_import
from tensor_copy import plain as _plain

EXTRA = RECORD["extra"]
EXTRA.update(pp_actions=[], pp_steps=[])

_original: dict = {}  # the wrapped methods, once the program imports their modules


def forward_one_chunk(self, fwd_chunk_id, *args, **kwargs):
    EXTRA["pp_actions"].append(f"F{fwd_chunk_id}")
    return _original["forward_one_chunk"](self, fwd_chunk_id, *args, **kwargs)


def backward_one_chunk(self, bwd_chunk_id, *args, **kwargs):
    EXTRA["pp_actions"].append(f"B{bwd_chunk_id}")
    return _original["backward_one_chunk"](self, bwd_chunk_id, *args, **kwargs)


def step(self, *args, target=None, losses=None, **kwargs):
    result = _original["step"](self, *args, target=target, losses=losses, **kwargs)
    EXTRA["pp_steps"].append({
        "schedule": type(self).__name__,
        "n_microbatches": self._n_microbatches,
        "args": [_plain(a) for a in args],
        "target": None if target is None else _plain(target),
        "losses": None if losses is None else [_plain(loss) for loss in losses],
    })
    return result


# when the program imports torch.distributed.pipelining, never before (it imports torch.distributed.nn)
wrap_after_import("torch.distributed.pipelining.stage", _original, owner="_PipelineStageBase",
                  forward_one_chunk=forward_one_chunk, backward_one_chunk=backward_one_chunk)
wrap_after_import("torch.distributed.pipelining.schedules", _original, owner="PipelineScheduleSingle", step=step)
