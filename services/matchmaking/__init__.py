"""Matchmaking: quick-start and arena queues, friends tables, forming tables of four."""
