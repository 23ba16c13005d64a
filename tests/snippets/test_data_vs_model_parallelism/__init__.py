"""Tests of the programs of docs/data-vs-model-parallelism.md, one module per program."""
