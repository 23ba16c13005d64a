"""Test harness loaded into every torchrun worker through PYTHONPATH (never published).

Python imports ``sitecustomize`` at start-up; the runner in ``tests/torchjob.py`` puts
this folder on ``PYTHONPATH`` and sets ``COURSE_HARNESS_DIR`` for a harness run (a bare
run has neither). Inside a worker (``RANK`` is set by torchrun; the torchrun agent itself
has no ``RANK``) it only observes -- ``README.md`` beside this file says, hook by hook,
why none of it changes what the program does:

* writes ``pid-<rank>-<restart>`` so the runner can prove no worker outlives the job;
* registers faulthandler on SIGUSR1 (a signal only the runner sends, to a job past its
  time limit, just before stopping it), so every rank's Python stack reaches its log;
* records, through PyTorch's public hooks: the indices each ``DistributedSampler``
  yielded per epoch, the first DDP optimizer step (weights before, averaged gradients,
  weights after), every ``torch.save`` call, and the weights of the first DDP-wrapped
  module after each optimizer step (the last of them is ``final_state``). Modules are
  held by weak reference only, so no object lives longer than the program keeps it;
* at exit, records the names of the process's threads (``threads_at_exit``): a gloo
  thread still running then outlived ``destroy_process_group`` (lesson 4, "End every
  worker cleanly");
* imports the extra recorder modules named in ``COURSE_HARNESS_PLUGINS`` (comma
  separated, found in this folder), which add what their lesson needs under
  ``RECORD["extra"]`` (``from sitecustomize import RECORD``) and wrap the modules the
  program imports later once it imports them (``after_import``), so that the harness
  imports nothing ahead of the program that would change its teardown.

The record is written to ``rank-<rank>-<restart>.pt`` by an ``atexit`` handler, which
Python runs after the program's own code has finished and before interpreter
finalization.
"""
import os

if "RANK" in os.environ and "COURSE_HARNESS_DIR" in os.environ:
    import atexit
    import faulthandler
    import signal
    import weakref
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
        "final_state": None,  # state_dict of the (first) DDP-wrapped module after its last step
        "destroyed": False,  # the program called destroy_process_group
        # this worker's torchrun log folder (its error file lies there), so a log is matched
        # to its global rank even when several agents share a --log-dir
        "log_dir": os.path.dirname(os.path.abspath(os.environ["TORCHELASTIC_ERROR_FILE"])) if os.environ.get("TORCHELASTIC_ERROR_FILE") else "",
        "ran_on": None,  # at destroy_process_group: backend, and the CUDA device if CUDA was used
        "threads_at_exit": [],  # names of this process's threads once the program's code has finished
        "harness_errors": [],  # a recorder's patch that failed (sitecustomize.after_import)
        "unpatched": [],  # watched modules the program imported that no patch reached
        "extra": {},  # filled by COURSE_HARNESS_PLUGINS modules
    }
    _ddp_module = None  # weakref.ref to the first DDP module seen in a forward
    _torch_save = torch.save

    def _clone_state(module):
        return {k: v.detach().cpu().clone() for k, v in module.state_dict().items()}

    def _watched():
        """The inner module of the watched DDP module, or None once the program let it go."""
        ddp = _ddp_module() if _ddp_module is not None else None
        return None if ddp is None else ddp.module

    _sampler_iter = DistributedSampler.__iter__

    def _recording_iter(self):
        # DistributedSampler.__iter__ builds the full index list and returns iter() of it;
        # this returns an iterator over the same list, in the same order.
        indices = list(_sampler_iter(self))
        RECORD["sampler_epochs"].append((self.epoch, indices))
        return iter(indices)

    DistributedSampler.__iter__ = _recording_iter

    def _on_forward(module, args):
        global _ddp_module
        if _ddp_module is None and isinstance(module, DistributedDataParallel):
            _ddp_module = weakref.ref(module)
            RECORD["first_step"] = {"before": _clone_state(module.module)}

    register_module_forward_pre_hook(_on_forward)

    def _pre_step(optimizer, args, kwargs):
        step, module = RECORD["first_step"], _watched()
        if step is not None and "grads" not in step and module is not None:
            step["grads"] = {n: p.grad.detach().cpu().clone() for n, p in module.named_parameters() if p.grad is not None}

    def _post_step(optimizer, args, kwargs):
        step, module = RECORD["first_step"], _watched()
        if module is None:
            return
        RECORD["final_state"] = _clone_state(module)
        if step is not None and "grads" in step and "after" not in step:
            step["after"] = RECORD["final_state"]

    register_optimizer_step_pre_hook(_pre_step)
    register_optimizer_step_post_hook(_post_step)

    def _recording_save(obj, f, *args, **kwargs):
        RECORD["saves"].append(str(f))
        return _torch_save(obj, f, *args, **kwargs)

    torch.save = _recording_save

    _destroy = dist.destroy_process_group

    def _ran_on():
        # reads only: the default group's backend, and CUDA's state where the program
        # itself initialized CUDA (is_initialized() initializes nothing)
        ran = {"backend": dist.get_backend() if dist.is_initialized() else None, "cuda": None}
        if torch.cuda.is_initialized():
            index = torch.cuda.current_device()
            props = torch.cuda.get_device_properties(index)
            ran["cuda"] = {"index": index, "name": props.name, "count": torch.cuda.device_count(),
                           "uuid": str(getattr(props, "uuid", "")), "host": os.uname().nodename,
                           "visible": os.environ.get("CUDA_VISIBLE_DEVICES")}
        return ran

    def _recording_destroy(*args, **kwargs):
        if not args and kwargs.get("group") is None:
            RECORD["destroyed"] = True  # the default group, i.e. every group
            RECORD["ran_on"] = _ran_on()
        return _destroy(*args, **kwargs)

    dist.destroy_process_group = _recording_destroy

    import importlib
    import importlib.abc
    import importlib.machinery
    import sys

    _after_import: dict = {}  # module name -> patches waiting for the program to import it
    _FILE_LOADERS = (importlib.machinery.SourceFileLoader, importlib.machinery.SourcelessFileLoader,
                     importlib.machinery.ExtensionFileLoader)  # one loader object per module

    def _run_patches(name, module):
        # a patch that fails must not fail the program's import: it is recorded, and
        # JobResult.check_exit fails the run instead
        for patch in _after_import.pop(name, []):
            try:
                patch(module)
            except Exception as exc:  # noqa: BLE001 - any failure of ours, reported, never raised
                RECORD["harness_errors"].append(f"patching {name}: {exc!r}")

    class _AfterImport(importlib.abc.MetaPathFinder):
        """Finds nothing itself: for a watched module it asks the finders after it, as
        the import system would, then runs the waiting patches on the module once its own
        code has run, before the importing statement gets it."""

        def find_spec(self, name, path, target=None):
            if name not in _after_import:
                return None
            for finder in sys.meta_path[sys.meta_path.index(self) + 1:]:
                spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
                if spec is not None:
                    break
            else:
                return None
            loader = spec.loader
            if type(loader) not in _FILE_LOADERS:  # shared or unusual loaders stay untouched
                return None  # (the patch then never runs: the record's "unpatched" says so)
            run_module = loader.exec_module

            def exec_module(module):
                try:
                    run_module(module)
                finally:
                    vars(loader).pop("exec_module", None)  # the loader is as it was
                _run_patches(name, module)

            loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _AfterImport())

    def after_import(name, patch):
        """Run ``patch(module)`` once the program imports the module ``name`` (at once if
        it is imported already). A recorder wraps a module this way instead of importing it
        ahead of the program, so that a harness run imports nothing that changes the
        program's teardown: importing ``torch.distributed.nn`` (which FSDP, DCP,
        ``torch.distributed.optim`` and pipelining import) after ``init_process_group``
        binds the default group as a default argument and keeps its gloo threads alive,
        and a harness that imported it first would hide that (README.md). A patch that
        raises is recorded in ``harness_errors``; a watched module that was imported but
        never patched is listed in ``unpatched`` (``importlib.reload`` of a patched module
        would undo its wrappers; no program reloads one)."""
        _after_import.setdefault(name, []).append(patch)
        if name in sys.modules:
            _run_patches(name, sys.modules[name])

    def wrap_after_import(name, originals, owner=None, **wrappers):
        """Once the program imports the module ``name`` (:func:`after_import`), replace
        each named attribute of the module, or of its class ``owner``, with its wrapper,
        keeping the original in the dict ``originals`` under the same name for the wrapper
        to call."""
        def patch(module):
            target = getattr(module, owner) if owner else module
            for attr, wrapper in wrappers.items():
                originals[attr] = getattr(target, attr)
                setattr(target, attr, wrapper)

        after_import(name, patch)

    for _plugin in filter(None, os.environ.get("COURSE_HARNESS_PLUGINS", "").split(",")):
        importlib.import_module(_plugin)

    def _thread_names():
        # reads only: the kernel's name of every thread of this process (gloo names its
        # own: pt_gloo_runloop, gloo_tcp_loop); /proc is Linux's, elsewhere nothing is read
        tasks = Path("/proc/self/task")
        if not tasks.is_dir():
            return []
        names = []
        for task in tasks.iterdir():
            try:
                names.append((task / "comm").read_text().strip())
            except OSError:  # the thread ended while we looked
                pass
        return sorted(names)

    @atexit.register
    def _write_record():
        RECORD["threads_at_exit"] = _thread_names()
        RECORD["unpatched"] = sorted(name for name in _after_import if name in sys.modules)
        # Written aside and renamed: torchrun may kill this worker while it writes (a
        # surviving rank of a failed attempt exits on its collective's error just as the
        # agent stops the group), and a truncated record must not pass for a record.
        final = _out / f"rank-{_rank}-{_restart}.pt"
        partial = _out / f".rank-{_rank}-{_restart}.pt.partial"
        _torch_save(RECORD, partial)
        os.replace(partial, final)
