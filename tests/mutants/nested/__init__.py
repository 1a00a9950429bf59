"""Mutants of the nested clauses."""
