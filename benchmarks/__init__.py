"""Benchmarks: run by hand (``make bench``), never by the test suite."""
