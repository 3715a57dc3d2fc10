"""Players' profiles: each finished match in their history, stats and rating."""
