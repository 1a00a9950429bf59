"""Mutants of the rng clauses."""
