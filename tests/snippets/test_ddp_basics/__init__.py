"""Tests of the programs of docs/ddp-basics.md, one module per program."""
