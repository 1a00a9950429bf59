"""Mutants of the debug clauses."""
