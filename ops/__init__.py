"""The operators' console: answer a player's complaint from the stored history, and act
on it safely (``python -m ops --help``; docs/operations.md)."""
