"""The embedded local stack: the same handlers on moto, a local gateway and a dispatcher."""
