"""Plain data and its models: the words (vocabulary), the clause registry, a test's facts and results, the
declarations and what they expect, each data file checked at the door (datafiles). Imports neither pytest nor the
implementation under test: the report reads them too."""
