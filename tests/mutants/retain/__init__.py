"""Mutants of the retain clauses."""
