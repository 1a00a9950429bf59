"""Self-tests of the harness (not part of the conformance suite): run with `pytest tests`."""

pytest_plugins = ["pytester"]
