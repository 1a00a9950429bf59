"""Self-tests of the harness (not part of the conformance suite)."""
