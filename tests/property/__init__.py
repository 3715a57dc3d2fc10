"""Property-based tests of the rules engine (hypothesis), over seeded random rounds."""
