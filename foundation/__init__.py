"""The foundation under every package of xmlevents (DESIGN section 11): what all seven share.

Private: no name here is part of the public API; each package re-exports what its users see
(the errors through their packages and the ``xmlevents`` facade). Every package may import it
(the layer contracts in ``pyproject.toml`` put it below the algebra); it imports no other
package of xmlevents. The modules are imported one by one (nothing is loaded here), so that a
package pays only for what it uses:

- :mod:`~xmlevents._foundation.errors` — the root of the error hierarchy and positioned errors.
- :mod:`~xmlevents._foundation.text` — one ``Token`` and ``Cursor`` for the five languages,
  with one wording of "unexpected" and "unclosed"; ``LineIndex`` and the error snippet.
- :mod:`~xmlevents._foundation.names` — the XML 1.0 (fifth edition) name patterns.
- :mod:`~xmlevents._foundation.jsonlines` — the one JSON reader and its policy (lines on
  ``\\n`` only, no ``NaN`` or infinities, bounded).
- :mod:`~xmlevents._foundation.xml` — the one hardened XML parser policy (lxml is imported
  there; the algebra never imports it).
- :mod:`~xmlevents._foundation.time` — the one time model: ``Duration`` and event time.
- :mod:`~xmlevents._foundation.rows` — the columns of the JSON lines and the replay's tables.
- :mod:`~xmlevents._foundation.subscriptions` — receivers checked when subscribed, and what
  they raise collected (the graph's and the watched documents').
- :mod:`~xmlevents._foundation.collector` — the cyclic garbage collector paused around work
  that makes no cycles (the stream's run, the service's replay).
- :mod:`~xmlevents._foundation.tables` — tables keyed by an enum, complete by construction
  (contexts, modes, strategies, feeders: issue 28's "fail closed").
- :mod:`~xmlevents._foundation.lazy` — a package's names imported on first use (PEP 562).
- :mod:`~xmlevents._foundation.compiled` — the modules ``setup.py`` compiles, by package, and
  their source imported instead where asked (``XMLEVENTS_PURE_PYTHON=1``) or stale.
"""
