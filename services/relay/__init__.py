"""The outbox relay: publishes the events that committed writes carry."""
