"""Streaming regular tree queries over huge XML (seed 004: Berlea, *Online Evaluation of
Regular Tree Queries*).

A query — Core XPath (:func:`parse_xpath`) or a regular tree grammar in the paper's notation
(:func:`parse_grammar`) — becomes a pre-order automaton built lazily as the input needs it
(sections 3-5). It runs over lxml's iterparse or any iterable of start/end events, keeps
only the undecided candidates, and reports every match once, at its earliest detection
location: the first event after which no continuation of the document could change the
answer (section 2), also where no single derivation shows it yet and Theorem 1 alone would
find it late (:mod:`._universal`, docs/guide/stream.md). Memory follows the depth of the
document and the candidates held, not its size.

>>> from xmlevents.stream import matches
>>> doc = b"<r><a><b/><c/></a><b><d/></b><a><b/><c/></a></r>"
>>> for m in matches("//a/b", doc):
...     print(m.node, m.path, m.detected.event, m.detected.node)
3 /r[1]/a[1]/b[1] start 3
8 /r[1]/a[2]/b[1] start 8
"""

# first: with XMLEVENTS_PURE_PYTHON=1 the modules below are imported from their source
from . import _compiled  # noqa: F401
from ._binary import binary_location, binary_locations, dewey_to_binary
from ._compile import compile_path, compile_xpath
from ._errors import DocumentError, QuerySyntaxError, UnsupportedQueryError
from ._formulas import CompiledGrammar
from ._grammar import ExplicitGrammar, ExplicitRule, Grammar, LabelTest, Production
from ._match import Detection, Match, Stats
from ._notation import parse_grammar
from ._poa import Automaton, Run
from ._query import Evaluation, Query, matches
from ._xpath import LocationPath, NodeTest, Step, parse_xpath

__all__ = [
    # evaluating
    "matches", "Query", "Evaluation", "Match", "Detection", "Stats",
    # queries
    "parse_xpath", "compile_xpath", "compile_path", "parse_grammar", "LocationPath", "Step",
    "NodeTest",
    # the model
    "Grammar", "ExplicitGrammar", "ExplicitRule", "CompiledGrammar", "Production", "LabelTest",
    "Automaton", "Run", "binary_location", "binary_locations", "dewey_to_binary",
    # errors
    "QuerySyntaxError", "UnsupportedQueryError", "DocumentError",
]
