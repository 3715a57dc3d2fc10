"""The deal service: shuffles and deals each round of a match."""
