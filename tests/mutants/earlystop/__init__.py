"""Mutants of the earlystop clauses."""
