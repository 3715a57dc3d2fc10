"""The connect service: checks tokens, records connections, tracks who is present."""
