"""The score service: scores finished rounds and decides how the match goes on."""
