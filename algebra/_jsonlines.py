"""The JSON-lines reader, as the algebra's modules and its public API name it.

The reader and its one policy (lines split on ``\\n`` only, JSON white space, no ``NaN`` or
infinities, bounded lengths, depths, integers and strings) live in the foundation,
:mod:`xmlevents._foundation.jsonlines`, shared by every package (issue 28); what is about
primitive events — their fields, the event reader's fast path — is the algebra's
(:mod:`._events`).
"""

from __future__ import annotations

from xmlevents._foundation.jsonlines import (
    MAX_INT,
    MAX_LINE,
    SCAN,
    JsonLineError,
    check_text,
    is_blank,
    load_line,
)

__all__ = ["JsonLineError", "load_line", "check_text", "is_blank", "SCAN", "MAX_LINE",
           "MAX_INT"]
