"""Recorder for the programs of docs/syncbn-and-sharding.md (never published).

Loaded in every worker by ``sitecustomize`` when the test passes
``plugins=("record_syncbn_and_sharding",)``. It watches the programs through public
PyTorch entry points, without changing what they compute, and fills ``RECORD["extra"]``:

* ``convert``: every outer ``SyncBatchNorm.convert_sync_batchnorm`` call, the module tree
  before and after (per module: its class name and the ``id`` of each of its own
  parameters and buffers, so a test can tell a swapped layer kept its tensors);
* ``ddp``: at the first forward of a ``DistributedDataParallel`` module, the class name
  of every submodule of the wrapped module and the device type of its parameters;
* ``by_hand``: every training-mode forward of a module of class ``SyncBatchNormByHand``:
  its input, output and running statistics after the call;
* ``zero``: after each step of a ``ZeroRedundancyOptimizer``, the names of the
  parameters its local optimizer holds and the shapes of their optimizer state;
* ``sharded_steps``: after each step of an optimizer over DTensor parameters (FSDP),
  per parameter in the optimizer's order: global shape, local shard shape, element
  size, local gradient shape and local shapes of its optimizer state;
* ``dcp``: the state passed to ``torch.distributed.checkpoint.save`` (``saved``), the
  state passed to ``load`` before and after loading (``before_load``, ``loaded``), and
  the model's and optimizer's local shards right after ``set_state_dict``
  (``restored``); tensors as this rank's local shard, keyed by path
  (``model/0.0.weight``, ``optimizer/state/0.0.weight/exp_avg``).
"""
from __future__ import annotations

import weakref
from collections.abc import Mapping

import torch
import torch.distributed.checkpoint as dcp
import torch.distributed.checkpoint.state_dict as dcp_state_dict
from torch import nn
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.distributed.tensor import DTensor
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from torch.nn.parallel import DistributedDataParallel
from torch.optim.optimizer import register_optimizer_step_post_hook

from sitecustomize import RECORD
from tensor_copy import plain as _plain

EXTRA = RECORD["extra"]
EXTRA.update(convert=[], ddp=None, by_hand=[], zero=None, sharded_steps=[],
             dcp={"saved": None, "before_load": None, "loaded": None, "restored": None})


def _local_shape(t: torch.Tensor) -> tuple[int, ...]:
    return tuple((t.to_local() if isinstance(t, DTensor) else t).shape)


def _flatten(obj, prefix: str = "") -> dict:
    """Nested dicts and lists as {"a/b/c": value}; tensors as local CPU copies."""
    if isinstance(obj, Mapping):
        out = {}
        for key, value in obj.items():
            out.update(_flatten(value, f"{prefix}{key}/"))
        return out
    if isinstance(obj, (list, tuple)):
        out = {}
        for i, value in enumerate(obj):
            out.update(_flatten(value, f"{prefix}{i}/"))
        return out
    if isinstance(obj, torch.Tensor):
        return {prefix[:-1]: _plain(obj)}
    return {prefix[:-1]: obj}


# --- SyncBatchNorm.convert_sync_batchnorm -------------------------------------------

def _describe(module: nn.Module) -> dict:
    tree = {}
    for name, m in module.named_modules():
        own = list(m.named_parameters(recurse=False)) + list(m.named_buffers(recurse=False))
        tree[name] = {"type": type(m).__name__, "tensors": {k: id(v) for k, v in own}}
    return tree


_convert = nn.SyncBatchNorm.convert_sync_batchnorm.__func__
_depth = 0


def _recording_convert(cls, module, process_group=None):
    global _depth
    outer = _depth == 0
    before = _describe(module) if outer else None
    _depth += 1
    try:
        out = _convert(cls, module, process_group)  # recurses through this wrapper
    finally:
        _depth -= 1
    if outer:
        EXTRA["convert"].append({"before": before, "after": _describe(out)})
    return out


nn.SyncBatchNorm.convert_sync_batchnorm = classmethod(_recording_convert)


# --- forwards: DDP's wrapped module, SyncBatchNormByHand -------------------------------

_ddp_module = None  # weakref.ref: never keeps the program's module alive


def _on_forward_pre(module, args):
    global _ddp_module
    if isinstance(module, DistributedDataParallel) and _ddp_module is None:
        _ddp_module = weakref.ref(module)
        if EXTRA["ddp"] is None:
            EXTRA["ddp"] = {
                "types": {name: type(m).__name__ for name, m in module.module.named_modules()},
                "device": next(module.module.parameters()).device.type,
            }


def _on_forward(module, args, output):
    if type(module).__name__ == "SyncBatchNormByHand" and module.training:
        EXTRA["by_hand"].append({
            "input": _plain(args[0]),
            "output": _plain(output),
            "running_mean": _plain(module.running_mean),
            "running_var": _plain(module.running_var),
            "num_batches_tracked": int(module.num_batches_tracked),
        })


register_module_forward_pre_hook(_on_forward_pre)
register_module_forward_hook(_on_forward)


# --- optimizer steps: ZeroRedundancyOptimizer, optimizers over FSDP shards -------------

def _on_step(optimizer, args, kwargs):
    if isinstance(optimizer, ZeroRedundancyOptimizer):
        ddp = _ddp_module() if _ddp_module is not None else None
        if ddp is None:
            return
        names = {id(p): n for n, p in ddp.module.named_parameters()}
        local = optimizer.optim
        EXTRA["zero"] = {
            "params": [names[id(p)] for g in local.param_groups for p in g["params"]],
            "state": {names[id(p)]: {k: tuple(v.shape) for k, v in s.items() if isinstance(v, torch.Tensor)}
                      for p, s in local.state.items()},
            "all_params": [names[id(p)] for g in optimizer.param_groups for p in g["params"]],
        }
        return
    params = [p for g in optimizer.param_groups for p in g["params"]]
    if params and all(isinstance(p, DTensor) for p in params):
        EXTRA["sharded_steps"].append([
            {
                "shape": tuple(p.shape),
                "local_shape": _local_shape(p),
                "element_size": p.element_size(),
                "grad_local_shape": None if p.grad is None else _local_shape(p.grad),
                "state": {k: _local_shape(v) for k, v in optimizer.state.get(p, {}).items()
                          if isinstance(v, torch.Tensor) and v.dim() > 0},
            }
            for p in params
        ])


register_optimizer_step_post_hook(_on_step)


# --- torch.distributed.checkpoint -------------------------------------------------------

_dcp_save = dcp.save
_dcp_load = dcp.load
_set_state_dict = dcp_state_dict.set_state_dict


def _recording_save(state_dict, *args, **kwargs):
    EXTRA["dcp"]["saved"] = _flatten(state_dict)
    return _dcp_save(state_dict, *args, **kwargs)


def _recording_load(state_dict, *args, **kwargs):
    EXTRA["dcp"]["before_load"] = _flatten(state_dict)
    out = _dcp_load(state_dict, *args, **kwargs)
    EXTRA["dcp"]["loaded"] = _flatten(state_dict)
    return out


def _recording_set_state_dict(model, optimizers, *args, **kwargs):
    out = _set_state_dict(model, optimizers, *args, **kwargs)
    restored = {f"model/{n}": _plain(p) for n, p in model.named_parameters()}
    for optimizer in optimizers if isinstance(optimizers, (list, tuple)) else [optimizers]:
        for n, p in model.named_parameters():
            for k, v in optimizer.state.get(p, {}).items():
                restored[f"optimizer/state/{n}/{k}"] = _plain(v) if isinstance(v, torch.Tensor) else v
    EXTRA["dcp"]["restored"] = restored
    return out


dcp.save = _recording_save
dcp.load = _recording_load
dcp_state_dict.set_state_dict = _recording_set_state_dict
