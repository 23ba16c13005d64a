"""Planted unclean end: imports torch.distributed.nn after init_process_group, whose
functions then hold the default group as a default argument, so its gloo threads are
still running when the code has finished; it exits 0 (most of the time)."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
import torch.distributed.nn  # noqa: E402,F401  binds group.WORLD, the live default group

t = torch.ones(1)
dist.all_reduce(t)
dist.destroy_process_group()
