"""Planted deadlock: each rank waits to receive from the other, so both block forever."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
peer = 1 - dist.get_rank()
buffer = torch.zeros(1)
dist.recv(buffer, src=peer)  # nobody ever sends
dist.destroy_process_group()
