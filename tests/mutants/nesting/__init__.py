"""Mutants of the nesting clauses."""
