"""Mutants of the groups clauses."""
