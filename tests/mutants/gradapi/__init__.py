"""Mutants of the gradapi clauses."""
