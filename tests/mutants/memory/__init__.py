"""Mutants of the memory clauses."""
