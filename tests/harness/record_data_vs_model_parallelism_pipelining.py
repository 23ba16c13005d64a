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
  passed none), read after the call;
* ``pp_passes``: every pass a stage ran, in call order, as ``(pass, stage index,
  micro-batch)``: ``"F"`` for ``forward_one_chunk``, ``"B"`` for ``backward_one_chunk``
  with ``full_backward=True``, ``"I"`` for it with ``full_backward=False`` (the gradient
  of the input only, as zero-bubble schedules run it) and ``"W"`` for
  ``backward_weight_one_chunk``;
* ``pp_multi_steps``: the same as ``pp_steps`` for every ``step`` of a schedule with
  several stages per rank (``PipelineScheduleMulti``, the base of
  ``ScheduleInterleaved1F1B`` and ``ScheduleInterleavedZeroBubble``), plus ``plan``: the
  schedule's own ``pipeline_order`` for every rank, each action as ``(pass, stage index,
  micro-batch)`` and each idle slot as None (``schedules.py``, "compute_only" format).

The wrappers call the original with the same arguments and return its result.
"""
from __future__ import annotations

from sitecustomize import RECORD, wrap_after_import
from tensor_copy import plain as _plain

EXTRA = RECORD["extra"]
EXTRA.update(pp_actions=[], pp_steps=[], pp_passes=[], pp_multi_steps=[])

_original: dict = {}  # the wrapped methods, once the program imports their modules
_multi: dict = {}  # PipelineScheduleMulti's step (a name the single-stage step also has)


def forward_one_chunk(self, fwd_chunk_id, *args, **kwargs):
    EXTRA["pp_actions"].append(f"F{fwd_chunk_id}")
    EXTRA["pp_passes"].append(("F", self.stage_index, fwd_chunk_id))
    return _original["forward_one_chunk"](self, fwd_chunk_id, *args, **kwargs)


def backward_one_chunk(self, bwd_chunk_id, *args, **kwargs):
    EXTRA["pp_actions"].append(f"B{bwd_chunk_id}")
    full = kwargs.get("full_backward", args[1] if len(args) > 1 else True)
    EXTRA["pp_passes"].append(("B" if full else "I", self.stage_index, bwd_chunk_id))
    return _original["backward_one_chunk"](self, bwd_chunk_id, *args, **kwargs)


def backward_weight_one_chunk(self, bwd_chunk_id, *args, **kwargs):
    EXTRA["pp_passes"].append(("W", self.stage_index, bwd_chunk_id))
    return _original["backward_weight_one_chunk"](self, bwd_chunk_id, *args, **kwargs)


def _step_record(schedule, args, target, losses) -> dict:
    """What one ``step`` call was given and put in the caller's ``losses``."""
    return {
        "schedule": type(schedule).__name__,
        "n_microbatches": schedule._n_microbatches,
        "args": [_plain(a) for a in args],
        "target": None if target is None else _plain(target),
        "losses": None if losses is None else [_plain(loss) for loss in losses],
    }


def step(self, *args, target=None, losses=None, **kwargs):
    result = _original["step"](self, *args, target=target, losses=losses, **kwargs)
    EXTRA["pp_steps"].append(_step_record(self, args, target, losses))
    return result


def _action(action) -> tuple[str, int, int] | None:
    """A planned action as (pass, stage, micro-batch); None for an idle slot."""
    if action is None:
        return None
    return action.computation_type.value, action.stage_index, action.microbatch_index


def multi_step(self, *args, target=None, losses=None, **kwargs):
    result = _multi["step"](self, *args, target=target, losses=losses, **kwargs)
    record = _step_record(self, args, target, losses)
    record["plan"] = {rank: [_action(a) for a in order] for rank, order in getattr(self, "pipeline_order", {}).items()}
    EXTRA["pp_multi_steps"].append(record)
    return result


# when the program imports torch.distributed.pipelining, never before (it imports torch.distributed.nn)
wrap_after_import("torch.distributed.pipelining.stage", _original, owner="_PipelineStageBase",
                  forward_one_chunk=forward_one_chunk, backward_one_chunk=backward_one_chunk,
                  backward_weight_one_chunk=backward_weight_one_chunk)
wrap_after_import("torch.distributed.pipelining.schedules", _original, owner="PipelineScheduleSingle", step=step)
wrap_after_import("torch.distributed.pipelining.schedules", _multi, owner="PipelineScheduleMulti", step=multi_step)
