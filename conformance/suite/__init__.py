"""The conformance suite: one module per area of conformance/data/clauses.toml (test_<area>.py)."""
