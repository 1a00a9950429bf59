"""Mutants of the exceptions clauses."""
