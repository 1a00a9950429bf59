"""Mutants of the determinism clauses."""
