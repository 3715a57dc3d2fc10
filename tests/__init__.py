"""A package, so that pytest imports ``tests/services`` as ``tests.services``: as a top-level
``services`` it shadowed the runtime package, whose modules then came from wherever the
installed distribution points."""
