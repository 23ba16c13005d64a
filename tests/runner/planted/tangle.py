"""Both ranks print many lines at once, to show how a bare run's terminal mixes them."""
import sys

import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
print(f"rank {rank}: stdout write_through={sys.stdout.write_through}")
dist.barrier()
for i in range(300):
    print(f"rank {rank}: line {i}")
dist.destroy_process_group()
