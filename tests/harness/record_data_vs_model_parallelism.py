"""Recorder for the programs of docs/data-vs-model-parallelism.md (never published).

Loaded in every worker by ``sitecustomize`` when the test passes
``plugins=("record_data_vs_model_parallelism",)``. It watches the program through
PyTorch's entry points, without changing what the program computes, and fills
``RECORD["extra"]``:

* ``all_reduce``: every blocking ``dist.all_reduce`` call, the tensor before and after,
  and the size of its process group;
* ``p2p``: every ``dist.send`` / ``dist.recv``: ``("send"|"recv", peer, tensor)``;
* ``losses``: the output of every loss module (``nn.modules.loss._Loss``) call;
* ``steps``: at every optimizer step, the parameters and gradients it is about to apply,
  in the optimizer's order (a DTensor as this rank's local shard), with each
  parameter's global shape and ``repr`` of its placements (None for a plain tensor);
* ``tp``: one entry per ``parallelize_module`` call: the module's full state before
  sharding; each parameter's global shape, placement and local shard after it; the
  module's first forward input and output after sharding; and its local gradient
  shards at the first optimizer step after it;
* ``fsdp``: one entry per ``fully_shard`` call: the names of the mesh dimensions, and
  the module's parameters that were plain tensors before sharding (a parameter that
  was already a DTensor, from tensor parallelism, is left out: gathering it would be a
  collective);
* ``dtensor_all_reduce``: every all-reduce that DTensor issues
  (``torch.distributed._functional_collectives.all_reduce``, which DTensor's
  ``Partial`` placement calls to become ``Replicate``), as ``"forward"`` or
  ``"backward"``: whether autograd was running a backward pass at the call.

The wrappers call the original with the same arguments and return its result; the
module of ``parallelize_module`` is held by weak reference only. ``parallelize_module``
and ``fully_shard`` are wrapped when the program imports their packages
(``sitecustomize.after_import``), never before: FSDP imports ``torch.distributed.nn``.
"""
from __future__ import annotations

import weakref

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from torch.distributed.tensor import DTensor
from torch.nn.modules.loss import _Loss
from torch.nn.modules.module import register_module_forward_hook
from torch.optim.optimizer import register_optimizer_step_pre_hook

from sitecustomize import RECORD, wrap_after_import
from tensor_copy import plain as _plain

EXTRA = RECORD["extra"]
EXTRA.update(all_reduce=[], p2p=[], losses=[], steps=[], tp=[], fsdp=[], dtensor_all_reduce=[])


_all_reduce, _send, _recv = dist.all_reduce, dist.send, dist.recv


def all_reduce(tensor, *args, **kwargs):
    before = _plain(tensor)
    group = kwargs.get("group", args[1] if len(args) > 1 else None)
    work = _all_reduce(tensor, *args, **kwargs)
    if work is None:  # blocking call: the result is in place now
        # get_world_size only reads the group's size; it communicates nothing
        EXTRA["all_reduce"].append({"before": before, "after": _plain(tensor), "group_size": dist.get_world_size(group)})
    return work


def send(tensor, dst=None, *args, **kwargs):
    EXTRA["p2p"].append(("send", dst, _plain(tensor)))
    return _send(tensor, dst, *args, **kwargs)


def recv(tensor, src=None, *args, **kwargs):
    sender = _recv(tensor, src, *args, **kwargs)
    EXTRA["p2p"].append(("recv", src, _plain(tensor)))
    return sender


dist.all_reduce, dist.send, dist.recv = all_reduce, send, recv

_funcol_all_reduce = funcol.all_reduce


def dtensor_all_reduce(*args, **kwargs):
    # -1 outside a backward pass (torch/csrc/autograd/python_engine.cpp)
    phase = "backward" if torch._C._current_graph_task_id() != -1 else "forward"
    EXTRA["dtensor_all_reduce"].append(phase)
    return _funcol_all_reduce(*args, **kwargs)


funcol.all_reduce = dtensor_all_reduce


def _on_forward(module, args, output):
    if isinstance(module, _Loss):
        EXTRA["losses"].append(_plain(output))


register_module_forward_hook(_on_forward)


def _pre_step(optimizer, args, kwargs):
    params = [p for group in optimizer.param_groups for p in group["params"]]
    EXTRA["steps"].append({
        "params": [_plain(p) for p in params],
        "grads": [None if p.grad is None else _plain(p.grad) for p in params],
        "shapes": [tuple(p.shape) for p in params],
        "placements": [repr(p.placements) if isinstance(p, DTensor) else None for p in params],
    })
    for entry, ref in zip(EXTRA["tp"], _tp_modules):
        module = ref()
        if "grads" not in entry and module is not None:
            entry["grads"] = {n: _plain(p.grad) for n, p in module.named_parameters() if p.grad is not None}


register_optimizer_step_pre_hook(_pre_step)

_original: dict = {}  # parallelize_module and fully_shard, once the program imports them
_tp_modules: list[weakref.ref] = []  # the module of each EXTRA["tp"] entry, by weak reference


def parallelize_module(module, *args, **kwargs):
    full = {k: _plain(v) for k, v in module.state_dict().items()}
    result = _original["parallelize_module"](module, *args, **kwargs)
    entry = {
        "full": full,
        "shards": {
            n: {"shape": tuple(p.shape), "placements": repr(getattr(p, "placements", None)), "local": _plain(p)}
            for n, p in result.named_parameters()
        },
    }
    EXTRA["tp"].append(entry)
    _tp_modules.append(weakref.ref(result))

    def _first_forward(mod, inputs, output):
        if "output" not in entry:
            entry["input"] = _plain(inputs[0])
            entry["output"] = _plain(output)

    result.register_forward_hook(_first_forward)
    return result


wrap_after_import("torch.distributed.tensor.parallel", _original, parallelize_module=parallelize_module)


def fully_shard(module, *args, **kwargs):
    plain = {n: _plain(p) for n, p in module.named_parameters() if not isinstance(p, DTensor)}
    result = _original["fully_shard"](module, *args, **kwargs)
    mesh = kwargs.get("mesh")
    EXTRA["fsdp"].append({"full": plain, "mesh": None if mesh is None else tuple(mesh.mesh_dim_names or ())})
    return result


wrap_after_import("torch.distributed.fsdp", _original, fully_shard=fully_shard)
