"""Mutants of the callers clauses."""
