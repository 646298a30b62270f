"""Wrapped lxml documents that emit primitive mutation events (DESIGN section 5)."""
