"""Test harness loaded into every torchrun worker through PYTHONPATH (never published).

Python imports ``sitecustomize`` at start-up; the runner in ``tests/torchjob.py`` puts
this folder first on ``PYTHONPATH`` and sets ``COURSE_HARNESS_DIR``. Inside a worker
(``RANK`` is set by torchrun; the torchrun agent itself has no ``RANK``) it:

* writes ``pid-<rank>`` so the runner can prove no worker outlives the job;
* registers faulthandler on SIGUSR1, so the runner can get every thread's Python stack
  out of a hung rank, even one blocked inside a C++ collective;
* records what the program did, through PyTorch's public hooks and without changing
  its behaviour: the indices each ``DistributedSampler`` yielded per epoch, the first
  DDP optimizer step (weights before, averaged gradients, weights after), every
  ``torch.save`` call, and the final weights of every DDP-wrapped module. The record is
  written to ``rank-<rank>-<restart>.pt`` when the worker exits;
* imports the extra recorder modules named in ``COURSE_HARNESS_PLUGINS`` (comma
  separated, found in this folder), which add what their lesson needs under
  ``RECORD["extra"]`` (``from sitecustomize import RECORD``).
"""
import os

if "RANK" in os.environ and "COURSE_HARNESS_DIR" in os.environ:
    import atexit
    import faulthandler
    import signal
    from pathlib import Path

    _out = Path(os.environ["COURSE_HARNESS_DIR"])
    _rank = int(os.environ["RANK"])
    _restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    (_out / f"pid-{_rank}-{_restart}").write_text(str(os.getpid()))
    faulthandler.register(signal.SIGUSR1, all_threads=True)

    import torch
    import torch.distributed as dist
    from torch.nn.modules.module import register_module_forward_pre_hook
    from torch.nn.parallel import DistributedDataParallel
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
    from torch.utils.data import DistributedSampler

    RECORD = {
        "rank": _rank,
        "local_rank": int(os.environ["LOCAL_RANK"]),
        "world_size": int(os.environ["WORLD_SIZE"]),
        "restart": _restart,
        "sampler_epochs": [],  # (epoch, [indices]) per pass over a DistributedSampler
        "saves": [],  # paths given to torch.save
        "first_step": None,  # {"before", "grads", "after"} of the first optimizer step
        "final_state": None,  # state_dict of the (first) DDP-wrapped module at exit
        "destroyed": False,  # the program called destroy_process_group
        "extra": {},  # filled by COURSE_HARNESS_PLUGINS modules
    }
    _ddp_modules = []
    _torch_save = torch.save

    def _clone_state(module):
        return {k: v.detach().cpu().clone() for k, v in module.state_dict().items()}

    _sampler_iter = DistributedSampler.__iter__

    def _recording_iter(self):
        indices = list(_sampler_iter(self))
        RECORD["sampler_epochs"].append((self.epoch, indices))
        return iter(indices)

    DistributedSampler.__iter__ = _recording_iter

    def _on_forward(module, args):
        if isinstance(module, DistributedDataParallel) and not any(m is module for m in _ddp_modules):
            _ddp_modules.append(module)
            if RECORD["first_step"] is None:
                RECORD["first_step"] = {"before": _clone_state(module.module)}

    register_module_forward_pre_hook(_on_forward)

    def _pre_step(optimizer, args, kwargs):
        step = RECORD["first_step"]
        if step is not None and "grads" not in step and _ddp_modules:
            module = _ddp_modules[0].module
            step["grads"] = {n: p.grad.detach().cpu().clone() for n, p in module.named_parameters() if p.grad is not None}

    def _post_step(optimizer, args, kwargs):
        step = RECORD["first_step"]
        if step is not None and "grads" in step and "after" not in step:
            step["after"] = _clone_state(_ddp_modules[0].module)

    register_optimizer_step_pre_hook(_pre_step)
    register_optimizer_step_post_hook(_post_step)

    def _recording_save(obj, f, *args, **kwargs):
        RECORD["saves"].append(str(f))
        return _torch_save(obj, f, *args, **kwargs)

    torch.save = _recording_save

    _destroy = dist.destroy_process_group

    def _recording_destroy(*args, **kwargs):
        RECORD["destroyed"] = True
        if _ddp_modules:
            RECORD["final_state"] = _clone_state(_ddp_modules[0].module)
        # Hold no DDP module past this point: a reducer kept alive until interpreter
        # shutdown can abort the process while gloo's threads release its tensors
        # (pytorch/pytorch#179291), a crash the published program itself never has.
        _ddp_modules.clear()
        return _destroy(*args, **kwargs)

    dist.destroy_process_group = _recording_destroy

    import importlib

    for _plugin in filter(None, os.environ.get("COURSE_HARNESS_PLUGINS", "").split(",")):
        importlib.import_module(_plugin)

    @atexit.register
    def _write_record():
        if RECORD["final_state"] is None and _ddp_modules:
            RECORD["final_state"] = _clone_state(_ddp_modules[0].module)
        _ddp_modules.clear()
        # Written aside and renamed: torchrun may kill this worker while it writes (a
        # surviving rank of a failed attempt exits on its collective's error just as the
        # agent stops the group), and a truncated record must not pass for a record.
        final = _out / f"rank-{_rank}-{_restart}.pt"
        partial = _out / f".rank-{_rank}-{_restart}.pt.partial"
        _torch_save(RECORD, partial)
        os.replace(partial, final)
        # Free reference cycles (DDP modules and their process groups) now, while the
        # interpreter is whole: left to the collector at interpreter shutdown, gloo's
        # threads can abort the process as they release tensors (pytorch/pytorch#179291).
        import gc

        gc.collect()
