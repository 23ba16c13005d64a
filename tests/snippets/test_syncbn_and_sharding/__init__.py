"""Tests of the programs of docs/syncbn-and-sharding.md, one module per program."""
