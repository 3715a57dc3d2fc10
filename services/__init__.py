"""Lambda services sharing the shared_engine rules package; added by later work."""
