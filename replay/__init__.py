"""Replay of document version histories into event streams, on Spark (DESIGN section 7)."""
