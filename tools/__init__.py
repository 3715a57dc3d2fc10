"""Development tools: they generate and check files of the repository, and never ship.

Nothing under ``services/`` or ``shared_engine/`` imports them, and the Lambda asset
(``infra/assets.py``) does not carry them.
"""
