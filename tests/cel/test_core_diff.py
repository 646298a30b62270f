"""The differential suite against CORE, a handful (issue 32, item 3): queries of CORE's
repository under ``--dialect core`` and in CORE (``pycer``, CPython 3.13 in a subprocess),
small generated streams, compared per end position. ``tools/core_diff.py`` runs them all.

Skipped, with the reason, where no CPython 3.13 with pycer is found
(``$XMLEVENTS_CORE_PYTHON``, else ``~/.pyenv/versions/3.13*``).
"""

from __future__ import annotations

import random

import pytest

from .core_corpus import compare, compile_core, core_python, corpus, generate

PYTHON, WHY = core_python()

#: one of each kind: AS on a pattern (smart homes), a type repeated in a partition under a
#: duration window (Bluesky), a variable repeated (crypto), NOT, a projection of a contiguous
#: iteration, an attribute window at its edge
CHOSEN = ["smart_homes/q1_none", "bluesky/q3", "crypto/q2", "unit/not-eval:517",
          "unit/projection/event_projection:874", "unit/within-custom:207"]
BY_NAME = {q.name: q for q in corpus()}


@pytest.mark.slow
@pytest.mark.skipif(PYTHON is None, reason=WHY)
@pytest.mark.parametrize("name", CHOSEN)
def test_agrees_with_core(name: str) -> None:
    assert PYTHON is not None
    query = BY_NAME[name]
    stream = generate(query.schema, 12 if "+" in query.text else 40, random.Random(7))
    verdict = compare(PYTHON, query, stream)
    assert verdict.agrees, verdict.note


def test_the_corpus_is_every_query_collected() -> None:
    """Every experiment of CORE's repository and its one-stream evaluation tests: 91
    experiment queries and 43 unit-test ones, each parsed by the core dialect."""
    queries = corpus()
    assert len(queries) == 134
    assert sum(q.name.startswith("unit/") for q in queries) == 43
    assert set(CHOSEN) <= set(BY_NAME)
    for q in queries:
        compile_core(q.text)
