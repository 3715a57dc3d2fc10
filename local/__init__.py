"""The embedded local stack: the same handlers on moto, a local gateway and a dispatcher."""

DEFAULT_PORT = 8080
"""Where ``python -m local`` listens unless ``--port`` says otherwise."""
STAGE = "ws"
"""The path of its WebSocket (``ws://127.0.0.1:8080/ws``): the local stack's stage."""
