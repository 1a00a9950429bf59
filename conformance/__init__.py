"""Conformance harness for activation checkpointing (the ``torch.utils.checkpoint`` contract)."""

__version__ = "0.1.0"
