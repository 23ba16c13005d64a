"""Recorder for the programs of docs/syncbn-and-sharding.md (never published).

Loaded in every worker by ``sitecustomize`` when the test passes
``plugins=("record_syncbn_and_sharding",)``. It watches the programs through public
PyTorch entry points, without changing what they compute (every wrapper calls the
original with the same arguments and returns its result; tensors are copied with
``tensor_copy.plain``; modules are held by weak reference), and fills ``RECORD["extra"]``:

* ``convert``: every outer ``SyncBatchNorm.convert_sync_batchnorm`` call, the module tree
  before and after (per module: its class name and the ``id`` of each of its own
  parameters and buffers, so a test can tell a swapped layer kept its tensors);
* ``ddp``: at the first forward of a ``DistributedDataParallel`` module, the class name
  of every submodule of the wrapped module and the device type of its parameters;
* ``by_hand``: every training-mode forward of a module of class ``SyncBatchNormByHand``:
  its input, output and running statistics after the call; and, after every
  ``torch.autograd.backward`` call while the input (a leaf tensor) and the layer are
  still alive, the input's ``.grad`` and the layer's weight and bias ``.grad``
  (``input_grad``, ``weight_grad``, ``bias_grad``; ``None`` until a backward filled
  them). The input and the layer are held by weak reference and read only after the
  program's own backward call has returned;
* ``batchnorm``: every forward of a BatchNorm or SyncBatchNorm layer: its class name,
  training mode, input, output and running statistics after the call; for a
  ``SyncBatchNorm`` in training mode whose input requires a gradient, also the gradient
  the backward pass computes for that input (``input_grad``, ``None`` until then), seen
  by a tensor hook that copies it and returns ``None``, so the gradient passes unchanged;
* ``zero``: after each step of a ``ZeroRedundancyOptimizer``, the names of the
  parameters its local optimizer holds and the shapes of their optimizer state;
* ``sharded_steps``: after each step of an optimizer over DTensor parameters (FSDP),
  per parameter in the optimizer's order: global shape, local shard shape, element
  size, local gradient shape, local shapes of its optimizer state and, for a parameter
  of at most ``KEEP_NUMEL`` elements, the values of its local shard (``local``);
* ``events``: in call order, the collectives the program and the libraries it calls
  issue through ``torch.distributed`` (``all_gather_single``, ``reduce_scatter_single``,
  ``all_reduce``, ``broadcast``: dtype, number of elements, ``src``; for an all-gather
  the global ranks of its group, ``ranks``; the object
  collectives ``gather_object``, ``scatter_object_list``, ``broadcast_object_list``,
  ``all_gather_object``: the class names of the objects this rank passes, how many
  tensors they contain, whether the call used the default group and whether it ran on
  the main thread), interleaved with markers: ``forward`` (a module that
  ``fully_shard`` made a unit starts its forward; its class name and the order in
  which units were first seen), ``backward`` (``torch.autograd.backward`` is called; the
  class name of every parameter of every unit seen so far, so a test can tell sharded
  DTensors from unsharded plain tensors), ``linear`` (an ``nn.Linear`` ran its forward),
  ``step`` (an optimizer step ended), and ``dcp_save``/``dcp_save_end`` around every
  ``torch.distributed.checkpoint.save`` call;
* ``model_state_dicts``: every ``get_model_state_dict`` call: its options, the
  ``DTensor.redistribute`` calls made inside it, in order (global and local shape, the
  placements of the result), and, per key of what it returned, shape, device and
  whether it is a DTensor;
* ``set_model_state_dicts``: every ``set_model_state_dict`` call: its options, how many
  entries the caller passed, the ``broadcast`` events issued inside it, and the model's
  local parameter shards afterwards;
* ``coalesced_broadcasts``: how many times ``dist._broadcast_coalesced`` ran (DDP's
  broadcast of parameters at construction and of buffers before a forward pass); each
  ``batchnorm`` entry holds the count as it was when that layer's forward ended;
* ``to_empty``: every ``nn.Module.to_empty`` call: the device type of each parameter's
  local shard before and after;
* ``full_tensors``: what every ``DTensor.full_tensor`` call returned;
* ``clips``: every ``torch.nn.utils.clip_grad_norm_`` call: ``max_norm``, the norm it
  returned (its value, its class name and, for a ``DTensor``, its placements), and the
  local gradient shards before and after;
* ``dcp``: the state passed to ``torch.distributed.checkpoint.save`` (``saved``), the
  state passed to ``load`` before and after loading (``before_load``, ``loaded``), and
  the model's and optimizer's local shards right after ``set_state_dict``
  (``restored``), and the ``get_state_dict``/``set_state_dict`` calls made inside
  ``load``, in order, with how many tensors each returned or was given and, for
  ``set_state_dict``, how many of those are the very tensors ``get_state_dict``
  returned there (``load_calls``); tensors as this rank's local shard, keyed by path
  (``model/0.0.weight``, ``optimizer/state/0.0.weight/exp_avg``); objects that are
  neither tensors, containers nor plain values (a ``Stateful``) by their class name only.
"""
from __future__ import annotations

import dataclasses
import functools
import sys
import threading
import types
import weakref
from collections.abc import Mapping

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.tensor import DTensor
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from torch.nn.parallel import DistributedDataParallel
from torch.optim.optimizer import register_optimizer_step_post_hook

from sitecustomize import RECORD, wrap_after_import
from tensor_copy import plain as _plain

EXTRA = RECORD["extra"]
EXTRA.update(convert=[], ddp=None, by_hand=[], batchnorm=[], zero=None, sharded_steps=[], events=[], coalesced_broadcasts=0,
             model_state_dicts=[], set_model_state_dicts=[], to_empty=[], full_tensors=[], clips=[],
             dcp={"saved": None, "before_load": None, "loaded": None, "restored": None})
EVENTS = EXTRA["events"]
KEEP_NUMEL = 100_000  # parameters up to this many elements keep their values in the record
_PLAIN_VALUES = (int, float, bool, str, bytes, type(None))


# FSDP, ZeroRedundancyOptimizer and DCP are wrapped or looked up only once the program has
# imported them (sitecustomize.after_import), never before: each imports torch.distributed.nn.
def _is_instance(obj, module: str, name: str) -> bool:
    """isinstance(obj, <module>.<name>), False while the program has not imported ``module``."""
    cls = getattr(sys.modules.get(module), name, None)  # None too while the module is half imported
    return cls is not None and isinstance(obj, cls)


def _fsdp_unit(module) -> bool:
    return _is_instance(module, "torch.distributed.fsdp", "FSDPModule")


def _local_shape(t: torch.Tensor) -> tuple[int, ...]:
    return tuple((t.to_local() if isinstance(t, DTensor) else t).shape)


def _flatten(obj, prefix: str = "") -> dict:
    """Nested dicts and lists as {"a/b/c": value}; tensors as local CPU copies, other
    objects (e.g. a Stateful) as ``"<ClassName>"``: never a reference to them."""
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
    if isinstance(obj, _PLAIN_VALUES):
        return {prefix[:-1]: obj}
    return {prefix[:-1]: f"<{type(obj).__name__}>"}


def _count_tensors(obj, seen: set | None = None) -> int:
    """How many tensors an object holds (containers, dataclasses and attributes walked);
    reads only."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, _PLAIN_VALUES):
        return 0
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        return 1
    if isinstance(obj, Mapping):
        return sum(_count_tensors(k, seen) + _count_tensors(v, seen) for k, v in obj.items())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return sum(_count_tensors(v, seen) for v in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return sum(_count_tensors(getattr(obj, f.name, None), seen) for f in dataclasses.fields(obj))
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return sum(_count_tensors(v, seen) for v in vars(obj).values())
    return 0


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


# --- forwards: DDP's wrapped module, FSDP units, BatchNorm layers -------------------------

_ddp_module = None  # weakref.ref: never keeps the program's module alive
_units: list[weakref.ref] = []  # FSDP units in the order of their first forward


def _unit_index(module: nn.Module) -> int:
    for i, ref in enumerate(_units):
        if ref() is module:
            return i
    _units.append(weakref.ref(module))
    return len(_units) - 1


def _on_forward_pre(module, args):
    global _ddp_module
    if isinstance(module, DistributedDataParallel) and _ddp_module is None:
        _ddp_module = weakref.ref(module)
        if EXTRA["ddp"] is None:
            EXTRA["ddp"] = {
                "types": {name: type(m).__name__ for name, m in module.module.named_modules()},
                "device": next(module.module.parameters()).device.type,
            }
    if _fsdp_unit(module):
        EVENTS.append({"op": "forward", "unit": _unit_index(module), "type": type(module).__name__})
    elif type(module) is nn.Linear:
        EVENTS.append({"op": "linear"})


# by-hand layers whose gradients are read after each backward: (entry, weak input, weak layer)
_by_hand_live: list[tuple[dict, weakref.ref, weakref.ref]] = []


def _keep_input_grad(entry: dict, grad: torch.Tensor) -> None:
    """A tensor hook: copies the gradient and returns None, so autograd uses it unchanged."""
    entry["input_grad"] = _plain(grad)


def _on_forward(module, args, output):
    if type(module).__name__ == "SyncBatchNormByHand" and module.training:
        entry = {
            "input": _plain(args[0]),
            "output": _plain(output),
            "running_mean": _plain(module.running_mean),
            "running_var": _plain(module.running_var),
            "num_batches_tracked": int(module.num_batches_tracked),
            "input_grad": None, "weight_grad": None, "bias_grad": None,
        }
        EXTRA["by_hand"].append(entry)
        if args[0].is_leaf and args[0].requires_grad:  # its .grad is kept: read it after the backward
            _by_hand_live.append((entry, weakref.ref(args[0]), weakref.ref(module)))
    elif isinstance(module, nn.modules.batchnorm._BatchNorm) and isinstance(output, torch.Tensor):
        entry = {
            "type": type(module).__name__,
            "training": module.training,
            "input": _plain(args[0]),
            "output": _plain(output),
            "running_mean": None if module.running_mean is None else _plain(module.running_mean),
            "running_var": None if module.running_var is None else _plain(module.running_var),
            "coalesced_broadcasts": EXTRA["coalesced_broadcasts"],
        }
        EXTRA["batchnorm"].append(entry)
        if type(module) is nn.SyncBatchNorm and module.training and args[0].requires_grad:
            entry["input_grad"] = None
            args[0].register_hook(functools.partial(_keep_input_grad, entry))


register_module_forward_pre_hook(_on_forward_pre)
register_module_forward_hook(_on_forward)

_autograd_backward = torch.autograd.backward


def _unit_params(unit: nn.Module) -> list[str]:
    """The class names of a unit's own parameters: those under it but not under a nested unit."""
    names, stack = [], [unit]
    while stack:
        module = stack.pop()
        names += [type(p).__name__ for p in module.parameters(recurse=False)]
        stack += [child for child in module.children() if not _fsdp_unit(child)]
    return names


def _read_by_hand_grads() -> None:
    """The by-hand layers' input, weight and bias gradients as they are now (copies)."""
    for entry, tensor, module in _by_hand_live:
        tensor, module = tensor(), module()
        if tensor is not None and tensor.grad is not None:
            entry["input_grad"] = _plain(tensor.grad)
        if module is not None:
            for name in ("weight", "bias"):
                param = getattr(module, name)
                if param is not None and param.grad is not None:
                    entry[f"{name}_grad"] = _plain(param.grad)


def _recording_backward(*args, **kwargs):
    units = [ref() for ref in _units]
    EVENTS.append({"op": "backward", "params": [None if unit is None else _unit_params(unit) for unit in units]})
    out = _autograd_backward(*args, **kwargs)
    _read_by_hand_grads()
    return out


torch.autograd.backward = _recording_backward


# --- collectives through torch.distributed ----------------------------------------------

def _tensor_event(op: str, tensor: torch.Tensor, **extra) -> None:
    EVENTS.append({"op": op, "dtype": str(tensor.dtype).removeprefix("torch."), "numel": tensor.numel(), **extra})


# torch 2.13 names them all_gather_single and reduce_scatter_single (the older names are
# deprecated aliases); torch 2.11, the GPU machine's, has only the older names, which FSDP calls.
_ALL_GATHER = "all_gather_single" if hasattr(dist, "all_gather_single") else "all_gather_into_tensor"
_REDUCE_SCATTER = "reduce_scatter_single" if hasattr(dist, "reduce_scatter_single") else "reduce_scatter_tensor"
_all_gather_single = getattr(dist, _ALL_GATHER)
_reduce_scatter_single = getattr(dist, _REDUCE_SCATTER)
_all_reduce = dist.all_reduce
_broadcast = dist.broadcast


def _group_ranks(group) -> list[int] | None:
    """The global ranks of a collective's group; None where this rank is not in it."""
    try:
        return dist.get_process_group_ranks(group or dist.group.WORLD)
    except (KeyError, ValueError, RuntimeError):
        return None


def _recording_all_gather_single(output_tensor, input_tensor, *args, **kwargs):
    group = kwargs.get("group", args[0] if args else None)
    _tensor_event("all_gather", input_tensor, ranks=_group_ranks(group))
    return _all_gather_single(output_tensor, input_tensor, *args, **kwargs)


def _recording_reduce_scatter_single(*args, **kwargs):
    _tensor_event("reduce_scatter", kwargs["input"] if "input" in kwargs else args[1])
    return _reduce_scatter_single(*args, **kwargs)


def _recording_all_reduce(tensor, *args, **kwargs):
    _tensor_event("all_reduce", tensor)
    return _all_reduce(tensor, *args, **kwargs)


def _recording_broadcast(tensor, *args, **kwargs):
    src = kwargs.get("src", args[0] if args else None)
    _tensor_event("broadcast", tensor, src=src)
    return _broadcast(tensor, *args, **kwargs)


_broadcast_coalesced = dist._broadcast_coalesced


def _counting_broadcast_coalesced(*args, **kwargs):
    EXTRA["coalesced_broadcasts"] += 1
    return _broadcast_coalesced(*args, **kwargs)


dist._broadcast_coalesced = _counting_broadcast_coalesced
setattr(dist, _ALL_GATHER, _recording_all_gather_single)
setattr(dist, _REDUCE_SCATTER, _recording_reduce_scatter_single)
dist.all_reduce = _recording_all_reduce
dist.broadcast = _recording_broadcast


def _object_collective(name: str, sent):
    original = getattr(dist, name)

    def recording(*args, **kwargs):
        objects = sent(args, kwargs)
        EVENTS.append({"op": name, "types": [type(o).__name__ for o in objects],
                       "tensors": sum(_count_tensors(o) for o in objects),
                       "default_group": kwargs.get("group") is None,
                       "main_thread": threading.current_thread() is threading.main_thread()})
        return original(*args, **kwargs)

    setattr(dist, name, recording)


def _arg(args, kwargs, index: int, name: str):
    return kwargs[name] if name in kwargs else (args[index] if len(args) > index else None)


# what this rank hands to each object collective (receivers' lists hold placeholders)
_object_collective("gather_object", lambda a, k: [_arg(a, k, 0, "obj")])
_object_collective("all_gather_object", lambda a, k: [_arg(a, k, 1, "obj")])
_object_collective("scatter_object_list", lambda a, k: list(_arg(a, k, 1, "scatter_object_input_list") or []))
_object_collective("broadcast_object_list", lambda a, k: list(_arg(a, k, 0, "object_list") or []))


# --- optimizer steps: ZeroRedundancyOptimizer, optimizers over FSDP shards -------------

def _on_step(optimizer, args, kwargs):
    if _is_instance(optimizer, "torch.distributed.optim", "ZeroRedundancyOptimizer"):
        EVENTS.append({"op": "step"})
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
        EVENTS.append({"op": "step"})
        EXTRA["sharded_steps"].append([
            {
                "shape": tuple(p.shape),
                "local_shape": _local_shape(p),
                "element_size": p.element_size(),
                "grad_local_shape": None if p.grad is None else _local_shape(p.grad),
                # the local shard after the step, for parameters of up to KEEP_NUMEL elements
                "local": _plain(p) if p.numel() <= KEEP_NUMEL else None,
                "state": {k: _local_shape(v) for k, v in optimizer.state.get(p, {}).items()
                          if isinstance(v, torch.Tensor) and v.dim() > 0},
            }
            for p in params
        ])


register_optimizer_step_post_hook(_on_step)


# --- full state dicts, full tensors, gradient clipping ------------------------------------

def _options(options) -> dict:
    return {} if options is None else {"full_state_dict": options.full_state_dict, "cpu_offload": options.cpu_offload,
                                       "broadcast_from_rank0": options.broadcast_from_rank0}


_original: dict = {}  # the wrapped functions of DCP, once the program imports them

_gathering: list | None = None  # while get_model_state_dict runs: its DTensor redistributions
_redistribute = DTensor.redistribute


def _recording_redistribute(self, *args, **kwargs):
    out = _redistribute(self, *args, **kwargs)
    if _gathering is not None:
        _gathering.append({"shape": tuple(self.shape), "local_shape": _local_shape(self),
                           "placements": [type(p).__name__ for p in out.placements]})
    return out


DTensor.redistribute = _recording_redistribute


def _recording_get_model_state_dict(model, *args, **kwargs):
    global _gathering
    _gathering = gathered = []
    try:
        out = _original["get_model_state_dict"](model, *args, **kwargs)
    finally:
        _gathering = None
    EXTRA["model_state_dicts"].append({
        "gathered": gathered,
        "options": _options(kwargs.get("options")),
        "tensors": {k: {"shape": tuple(v.shape), "device": v.device.type, "dtensor": isinstance(v, DTensor)}
                    for k, v in out.items() if isinstance(v, torch.Tensor)},
    })
    return out


def _recording_set_model_state_dict(model, model_state_dict, *args, **kwargs):
    given = len(model_state_dict)  # the call consumes the dict: count it first
    first_event = len(EVENTS)
    out = _original["set_model_state_dict"](model, model_state_dict, *args, **kwargs)
    EXTRA["set_model_state_dicts"].append({
        "broadcasts": [e for e in EVENTS[first_event:] if e["op"] == "broadcast"],
        "options": _options(kwargs.get("options")),
        "given": given,
        "after": {n: _plain(p) for n, p in model.named_parameters()},
    })
    return out


_to_empty = nn.Module.to_empty


def _devices(module: nn.Module) -> dict[str, str]:
    return {n: (p.to_local() if isinstance(p, DTensor) else p).device.type for n, p in module.named_parameters()}


def _recording_to_empty(self, *args, **kwargs):
    before = _devices(self)
    out = _to_empty(self, *args, **kwargs)
    EXTRA["to_empty"].append({"before": before, "after": _devices(self)})
    return out


nn.Module.to_empty = _recording_to_empty

_full_tensor = DTensor.full_tensor


def _recording_full_tensor(self, *args, **kwargs):
    out = _full_tensor(self, *args, **kwargs)
    EXTRA["full_tensors"].append(_plain(out))
    return out


DTensor.full_tensor = _recording_full_tensor

_clip_grad_norm = torch.nn.utils.clip_grad_norm_


def _recording_clip_grad_norm(parameters, max_norm, *args, **kwargs):
    given = parameters
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    if isinstance(given, types.GeneratorType):
        parameters = (p for p in params)  # the same kind of argument: a generator over the same parameters
    elif not isinstance(given, torch.Tensor):
        parameters = params
    before = [None if p.grad is None else _plain(p.grad) for p in params]
    norm = _clip_grad_norm(parameters, max_norm, *args, **kwargs)
    EXTRA["clips"].append({"max_norm": float(max_norm), "norm": _plain(norm), "before": before,
                           "norm_class": type(norm).__name__,
                           "norm_placements": [str(pl) for pl in norm.placements] if isinstance(norm, DTensor) else None,
                           "after": [None if p.grad is None else _plain(p.grad) for p in params]})
    return norm


torch.nn.utils.clip_grad_norm_ = _recording_clip_grad_norm


# --- torch.distributed.checkpoint -------------------------------------------------------


def _recording_save(state_dict, *args, **kwargs):
    EXTRA["dcp"]["saved"] = _flatten(state_dict)
    EVENTS.append({"op": "dcp_save"})
    try:
        return _original["save"](state_dict, *args, **kwargs)
    finally:
        EVENTS.append({"op": "dcp_save_end"})


_loading: list | None = None  # while dcp.load runs: the get/set_state_dict calls made inside it
_got: set[int] = set()  # ids of the tensors get_state_dict returned inside dcp.load


def _tensors(obj) -> list[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, Mapping):
        return [t for v in obj.values() for t in _tensors(v)]
    if isinstance(obj, (list, tuple)):
        return [t for v in obj for t in _tensors(v)]
    return []


def _recording_load(state_dict, *args, **kwargs):
    global _loading
    EXTRA["dcp"]["before_load"] = _flatten(state_dict)
    _loading = []
    _got.clear()
    try:
        out = _original["load"](state_dict, *args, **kwargs)
    finally:
        EXTRA["dcp"]["load_calls"], _loading = _loading, None
    EXTRA["dcp"]["loaded"] = _flatten(state_dict)
    return out


def _recording_get_state_dict(*args, **kwargs):
    out = _original["get_state_dict"](*args, **kwargs)
    if _loading is not None:
        got = _tensors(out)
        _got.update(id(t) for t in got)
        _loading.append({"call": "get_state_dict", "tensors": len(got)})
    return out


def _recording_set_state_dict(model, optimizers, *args, **kwargs):
    if _loading is not None:
        given = _tensors([args, kwargs])
        _loading.append({"call": "set_state_dict", "tensors": len(given),
                         "from_get_state_dict": sum(id(t) in _got for t in given)})
    out = _original["set_state_dict"](model, optimizers, *args, **kwargs)
    restored = {f"model/{n}": _plain(p) for n, p in model.named_parameters()}
    for optimizer in optimizers if isinstance(optimizers, (list, tuple)) else [optimizers]:
        for n, p in model.named_parameters():
            for k, v in optimizer.state.get(p, {}).items():
                restored[f"optimizer/state/{n}/{k}"] = _plain(v) if isinstance(v, torch.Tensor) else v
    EXTRA["dcp"]["restored"] = restored
    return out


wrap_after_import("torch.distributed.checkpoint", _original, save=_recording_save, load=_recording_load)
wrap_after_import("torch.distributed.checkpoint.state_dict", _original,
                  get_model_state_dict=_recording_get_model_state_dict,
                  set_model_state_dict=_recording_set_model_state_dict,
                  get_state_dict=_recording_get_state_dict, set_state_dict=_recording_set_state_dict)
