"""Mutants of the sac clauses."""
