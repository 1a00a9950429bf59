"""The conformance suite: one module per area of conformance/clauses.toml (test_<area>.py)."""
