"""Correct implementations that declare nothing: each must pass the whole suite, its exit status 0,
with no expectation written for it (tests/integration/test_levels.py). They stand for the independently written
implementations the suite is judged against, and keep the harness honest where the docs allow more than
one behaviour: failures of SHOULD and OBSERVED clauses are reported, they do not fail the run."""
