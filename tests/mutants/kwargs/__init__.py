"""Mutants of the kwargs clauses."""
