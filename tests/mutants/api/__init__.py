"""Mutants of the api clauses."""
