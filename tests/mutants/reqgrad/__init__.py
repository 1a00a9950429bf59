"""Mutants of the reqgrad clauses."""
