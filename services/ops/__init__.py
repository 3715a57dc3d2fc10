"""The operators' function: void, close, credit and kick, each planned, done once and audited."""
