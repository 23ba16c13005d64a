"""Planted hang for any world size: every rank waits to receive from the next one, so all block forever."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world_size = dist.get_rank(), dist.get_world_size()
print(f"rank {rank} waiting in recv", flush=True)
dist.recv(torch.zeros(1), src=(rank + 1) % world_size)  # nobody ever sends
dist.destroy_process_group()
