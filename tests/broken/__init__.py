"""Broken implementations for the runner's isolation tests (not clause mutants: they break the
*process* or the *report*, not one documented behaviour). Each is usable as
``--impl=tests.broken.<name>`` and behaves like torch.utils.checkpoint except where it says."""
