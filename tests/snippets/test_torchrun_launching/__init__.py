"""Tests of the programs of docs/torchrun-launching.md, one module per program."""
