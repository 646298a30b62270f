"""What the command line's subcommands share: argument types."""

from __future__ import annotations

import argparse

from xmlevents.algebra import Duration, XmlEventsError, window

__all__ = ["window_argument"]


def window_argument(text: str) -> int | Duration:
    """``--within``'s value: a positive number of ticks or a duration (``30s``); argparse
    words the error."""
    try:
        return window(int(text) if text.strip().lstrip("-").isdigit() else text)
    except XmlEventsError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
