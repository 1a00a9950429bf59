"""Mutants of the inputs clauses."""
