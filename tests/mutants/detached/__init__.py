"""Mutants of the detached clauses."""
