"""Mutants of the modulestate clauses."""
