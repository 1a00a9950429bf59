"""Mutants of the distributed clauses."""
