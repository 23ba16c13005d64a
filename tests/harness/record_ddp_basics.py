"""Recorder for the programs of docs/ddp-basics.md (never published).

Loaded in every worker by ``sitecustomize`` when the test passes
``plugins=("record_ddp_basics",)``. It watches the programs through public PyTorch
entry points, without changing what they compute, and fills ``RECORD["extra"]``:

* ``wraps``: for every ``DistributedDataParallel`` construction, the wrapped module's
  state just before and just after the constructor ran (``before``, ``after``) and the
  keys of the wrapper's own ``state_dict()`` (``wrapper_keys``);
* ``buckets``: every call of a communication hook the program registered: the number
  of optimizer steps taken before it (``step``), the hook's ``__name__`` (``hook``), the
  bucket's index, its parameters' names and shapes, and its flat buffer's element count,
  dtype and address range (``start``, ``end``, in bytes; an address is only compared
  with other addresses); for a buffer of at most ``KEEP_NUMEL`` elements also its values
  when the hook was called (``grad_in``, this rank's gradients) and when the hook's
  future completed (``grad_out``, what DDP then copies into ``.grad``; ``None`` if the
  future's value is not a tensor); and ``sent``, the element count and dtype of every
  ``torch.distributed.all_reduce`` call made from the hook's call until its future
  completed (a call is given to the latest hook call whose future is still pending:
  exact when one bucket is in flight at a time and the program itself all-reduces
  nothing during a backward pass, as in the programs that compress). Observing the
  future adds a callback that returns its value unchanged; on a GPU, copying the
  buffers to the CPU waits for them, which changes timing but no value;
* ``steps``: at every optimizer step of the first DDP-wrapped module (taken before the
  step runs): its weights, its gradients, each gradient's address, and whether the
  optimizer holds exactly the module's own parameter tensors (``same_tensors``);
* ``scales``: the scale of every ``torch.amp.GradScaler`` after each ``update()``;
* ``after_join``: the first DDP-wrapped module's state when a ``Join`` context exits;
* ``join_trace``: inside ``Join`` contexts, in order, ``("forward", 0)`` when a
  ``DistributedDataParallel`` forward starts and ``("all_reduce", numel)`` for every
  ``torch.distributed.all_reduce`` call (DDP's gradient buckets do not go through it
  unless a Python communication hook calls it);
* ``linear_dtypes``: the output dtype of the first 16 ``nn.Linear`` forward calls.
"""
from __future__ import annotations

import functools
import threading
import weakref

import torch
import torch.distributed as dist
from torch import nn
from torch.amp import GradScaler
from torch.distributed.algorithms.join import Join
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from torch.nn.parallel import DistributedDataParallel
from torch.optim.optimizer import register_optimizer_step_pre_hook

from sitecustomize import RECORD
from tensor_copy import plain as _plain

EXTRA = RECORD["extra"]
EXTRA.update(wraps=[], buckets=[], steps=[], scales=[], after_join=None, linear_dtypes=[], join_trace=[])
_ddp = None  # weakref.ref to the first DistributedDataParallel module constructed
KEEP_NUMEL = 100_000  # buffers up to this many elements are kept in the record
_pending: list[int] = []  # indices into EXTRA["buckets"] of hook calls whose future is pending
_pending_lock = threading.Lock()  # _pending changes on the threads that complete futures


def _state(module: nn.Module) -> dict[str, torch.Tensor]:
    return {k: _plain(v) for k, v in module.state_dict().items()}


def _module():
    """The first DDP module's inner module, or None once the program let it go."""
    ddp = _ddp() if _ddp is not None else None
    return None if ddp is None else ddp.module


# --- construction: what the constructor did to the weights --------------------------

_init = DistributedDataParallel.__init__


@functools.wraps(_init)
def _recording_init(self, module, *args, **kwargs):
    global _ddp
    before = _state(module)
    _init(self, module, *args, **kwargs)
    EXTRA["wraps"].append({"before": before, "after": _state(module), "wrapper_keys": list(self.state_dict())})
    if _ddp is None:
        _ddp = weakref.ref(self)


DistributedDataParallel.__init__ = _recording_init


# --- communication hooks: which bucket, when, where its buffer lives ---------------

_register_comm_hook = DistributedDataParallel.register_comm_hook


@functools.wraps(_register_comm_hook)
def _recording_register_comm_hook(self, state, hook):
    names = {id(p): n for n, p in self.module.named_parameters()}

    # functools.wraps keeps the hook's signature and name, which DDP inspects
    @functools.wraps(hook)
    def observed(state, bucket):
        buffer = bucket.buffer()
        start = buffer.data_ptr()
        keep = buffer.numel() <= KEEP_NUMEL
        record = {
            "step": len(EXTRA["steps"]),
            "hook": getattr(hook, "__name__", "?"),
            "index": bucket.index(),
            "params": [names.get(id(p), "?") for p in bucket.parameters()],
            "shapes": [tuple(p.shape) for p in bucket.parameters()],
            "numel": buffer.numel(),
            "dtype": buffer.dtype,
            "start": start,
            "end": start + buffer.numel() * buffer.element_size(),
            "grad_in": _plain(buffer) if keep else None,
            "grad_out": None,
            "sent": [],
        }
        with _pending_lock:
            index = len(EXTRA["buckets"])
            EXTRA["buckets"].append(record)
            _pending.append(index)

        def completed(fut):  # runs on the thread that completes the future (gloo's, NCCL's)
            try:
                value = fut.value()  # raises what the hook's future raised, for DDP to see
            finally:
                with _pending_lock:
                    _pending.remove(index)
            if keep and isinstance(value, torch.Tensor):
                record["grad_out"] = _plain(value)
            return value

        return hook(state, bucket).then(completed)

    return _register_comm_hook(self, state, observed)


DistributedDataParallel.register_comm_hook = _recording_register_comm_hook


# --- optimizer steps of the first DDP module ----------------------------------------

def _pre_step(optimizer, args, kwargs):
    module = _module()
    if module is None:
        return
    params = [p for group in optimizer.param_groups for p in group["params"]]
    own = list(module.parameters())
    named = list(module.named_parameters())
    EXTRA["steps"].append({
        "weights": _state(module),
        "grads": {n: _plain(p.grad) for n, p in named if p.grad is not None},
        "grad_ptrs": {n: p.grad.data_ptr() for n, p in named if p.grad is not None},
        "same_tensors": len(params) == len(own) and {id(p) for p in params} == {id(q) for q in own},
    })


register_optimizer_step_pre_hook(_pre_step)


# --- GradScaler ---------------------------------------------------------------------

_update = GradScaler.update


@functools.wraps(_update)
def _recording_update(self, *args, **kwargs):
    result = _update(self, *args, **kwargs)
    EXTRA["scales"].append(self.get_scale())
    return result


GradScaler.update = _recording_update


# --- Join: the weights once every rank has joined -----------------------------------

_join_enter = Join.__enter__
_join_exit = Join.__exit__
_in_join = False
_all_reduce = dist.all_reduce


@functools.wraps(_join_enter)
def _recording_join_enter(self, *args, **kwargs):
    global _in_join
    _in_join = True
    return _join_enter(self, *args, **kwargs)


@functools.wraps(_join_exit)
def _recording_join_exit(self, *args, **kwargs):
    global _in_join
    try:
        result = _join_exit(self, *args, **kwargs)
    finally:
        _in_join = False
    module = _module()
    if module is not None:
        EXTRA["after_join"] = _state(module)
    return result


Join.__enter__ = _recording_join_enter
Join.__exit__ = _recording_join_exit


@functools.wraps(_all_reduce)
def _recording_all_reduce(tensor, *args, **kwargs):
    if _in_join and len(EXTRA["join_trace"]) < 500:
        EXTRA["join_trace"].append(("all_reduce", tensor.numel()))
    with _pending_lock:
        if _pending:
            EXTRA["buckets"][_pending[-1]]["sent"].append((tensor.numel(), tensor.dtype))
    return _all_reduce(tensor, *args, **kwargs)


dist.all_reduce = _recording_all_reduce


def _on_forward_pre(module, args):
    if _in_join and isinstance(module, DistributedDataParallel) and len(EXTRA["join_trace"]) < 500:
        EXTRA["join_trace"].append(("forward", 0))


register_module_forward_pre_hook(_on_forward_pre)


# --- dtypes of Linear outputs (mixed precision) -------------------------------------

def _on_forward(module, args, output):
    if isinstance(module, nn.Linear) and isinstance(output, torch.Tensor) and len(EXTRA["linear_dtypes"]) < 16:
        EXTRA["linear_dtypes"].append(output.dtype)


register_module_forward_hook(_on_forward)
