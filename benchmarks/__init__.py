"""Benchmarks: run by hand (``make bench``, ``python -m benchmarks``), never by the test suite.

``engine`` (rules engine throughput and latencies), ``coldstart`` (handler
imports and first invocation in fresh interpreters), ``handlers`` (whole
matches through the handler functions on in-process moto, metered by
``meter``), ``usage`` (per action, round and match), ``cost`` (AWS list
prices), ``report`` (the table). docs/performance.md has the figures.
"""
