"""Mutants of the outputs clauses."""
