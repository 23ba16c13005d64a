"""Recorder for the programs of docs/data-vs-model-parallelism.md (never published).

Loaded in every worker by ``sitecustomize`` when the test passes
``plugins=("record_data_vs_model_parallelism",)``. It watches the program through
public PyTorch entry points, without changing what the program computes, and fills
``RECORD["extra"]``:

* ``all_reduce``: every blocking ``dist.all_reduce`` call, the tensor before and after;
* ``p2p``: every ``dist.send`` / ``dist.recv``: ``("send"|"recv", peer, tensor)``;
* ``losses``: the output of every loss module (``nn.modules.loss._Loss``) call;
* ``steps``: at every optimizer step, the parameters and gradients it is about to apply,
  in the optimizer's order (a DTensor is recorded as this rank's local shard);
* ``tp``: for ``parallelize_module``: the module's full state before sharding, each
  parameter's global shape, placement and local shard after it, the first forward's
  input and output, and the local gradient shards at the first optimizer step.
"""
from __future__ import annotations

import weakref

import torch
import torch.distributed as dist
import torch.distributed.tensor.parallel as tensor_parallel
from torch.nn.modules.loss import _Loss
from torch.nn.modules.module import register_module_forward_hook
from torch.optim.optimizer import register_optimizer_step_pre_hook

from sitecustomize import RECORD
from tensor_copy import plain as _plain

EXTRA = RECORD["extra"]
EXTRA.update(all_reduce=[], p2p=[], losses=[], steps=[], tp=None)


_all_reduce, _send, _recv = dist.all_reduce, dist.send, dist.recv


def all_reduce(tensor, *args, **kwargs):
    before = _plain(tensor)
    work = _all_reduce(tensor, *args, **kwargs)
    if work is None:  # blocking call: the result is in place now
        EXTRA["all_reduce"].append({"before": before, "after": _plain(tensor)})
    return work


def send(tensor, dst=None, *args, **kwargs):
    EXTRA["p2p"].append(("send", dst, _plain(tensor)))
    return _send(tensor, dst, *args, **kwargs)


def recv(tensor, src=None, *args, **kwargs):
    sender = _recv(tensor, src, *args, **kwargs)
    EXTRA["p2p"].append(("recv", src, _plain(tensor)))
    return sender


dist.all_reduce, dist.send, dist.recv = all_reduce, send, recv


def _on_forward(module, args, output):
    if isinstance(module, _Loss):
        EXTRA["losses"].append(_plain(output))


register_module_forward_hook(_on_forward)

_tp_module = None  # weakref.ref to the module parallelize_module returned


def _pre_step(optimizer, args, kwargs):
    params = [p for group in optimizer.param_groups for p in group["params"]]
    EXTRA["steps"].append({
        "params": [_plain(p) for p in params],
        "grads": [None if p.grad is None else _plain(p.grad) for p in params],
    })
    tp = EXTRA["tp"]
    module = _tp_module() if _tp_module is not None else None
    if tp is not None and "grads" not in tp and module is not None:
        tp["grads"] = {n: _plain(p.grad) for n, p in module.named_parameters() if p.grad is not None}


register_optimizer_step_pre_hook(_pre_step)

_parallelize_module = tensor_parallel.parallelize_module


def parallelize_module(module, *args, **kwargs):
    global _tp_module
    full = {k: _plain(v) for k, v in module.state_dict().items()}
    result = _parallelize_module(module, *args, **kwargs)
    if EXTRA["tp"] is None:
        EXTRA["tp"] = {
            "full": full,
            "shards": {
                n: {"shape": tuple(p.shape), "placements": repr(getattr(p, "placements", None)), "local": _plain(p)}
                for n, p in result.named_parameters()
            },
        }
        _tp_module = weakref.ref(result)

        def _first_forward(mod, inputs, output):
            if "output" not in EXTRA["tp"]:
                EXTRA["tp"]["input"] = _plain(inputs[0])
                EXTRA["tp"]["output"] = _plain(output)

        result.register_forward_hook(_first_forward)
    return result


tensor_parallel.parallelize_module = parallelize_module
