"""Planted false success: gives up without doing anything and still exits 0."""
print("not enough GPUs for this example, skipping")
