"""Mutants of the autocast clauses."""
