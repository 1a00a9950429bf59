"""What a conformance test checks with: assertion helpers named in the spec's vocabulary, random draws from fixed seeds."""
