"""Planted probe: every rank prints the names of its environment variables, one per line."""
import os

import torch.distributed as dist

dist.init_process_group("gloo")
print("\n".join(f"env {name}" for name in sorted(os.environ)))
dist.destroy_process_group()
