"""Helpers the mutants are built from (not mutants themselves)."""
