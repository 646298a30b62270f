"""Wrapped lxml documents that emit primitive mutation events (DESIGN section 5)."""

from ._conditions import XPathDocuments, xpath_boolean

__all__ = ["XPathDocuments", "xpath_boolean"]
