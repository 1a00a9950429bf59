"""Mutants of the recompute clauses."""
