"""Planted crash: rank 1 raises while rank 0 waits for it in an all-reduce."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
if dist.get_rank() == 1:
    raise RuntimeError("planted crash on rank 1")
dist.all_reduce(torch.ones(1))
dist.destroy_process_group()
