"""Mutants of the warnings clauses."""
