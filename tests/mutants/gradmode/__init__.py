"""Mutants of the gradmode clauses."""
