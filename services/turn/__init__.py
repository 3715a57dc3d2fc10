"""The turn service: plays actions, runs turn timers and auto-play (TABLE-2)."""
