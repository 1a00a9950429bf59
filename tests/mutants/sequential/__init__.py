"""Mutants of the sequential clauses."""
