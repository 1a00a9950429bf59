"""Mutants of the contextfn clauses."""
