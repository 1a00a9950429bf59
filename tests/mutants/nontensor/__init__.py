"""Mutants of the nontensor clauses."""
