"""CEL: complex event queries with selection strategies (seed 003, Bucchi, Grez, Riveros,
Ugarte, *Foundations of Complex Event Processing*), written in CORE's CEQL.

Built: the language (CEQL parsed with positions, the paper's well-formedness and safety
checks), the reference evaluator of the denotational semantics (section 3) with the selection
strategies (section 4), windows and partitions, and the automaton evaluator (filters pushed to
their variables, a complex event automaton, lazy determinisation, a shared structure of runs:
work per event independent of the number of partial matches; sections 5-7).
"""

from ._cea import compile_cea, count, evaluate
from ._checks import bound, check_formula, defined
from ._errors import CELQueryError, CELSyntaxError, StreamError
from ._events import Event, Value
from ._parser import parse_formula, parse_query
from ._predicates import Predicate
from ._reference import reference, select
from ._sources import read_jsonl
from .ast import As, EventType, Filter, Formula, Match, Or, Plus, Query, Seq, Strategy, Window

__all__ = [
    "Formula", "EventType", "As", "Seq", "Or", "Plus", "Filter", "Predicate", "Strategy",
    "Window", "Query", "Match", "Event", "Value",
    "parse_query", "parse_formula", "check_formula", "bound", "defined", "compile_query",
    "reference", "select", "read_jsonl", "evaluate", "count", "compile_cea",
    "CELSyntaxError", "CELQueryError", "StreamError",
]


def compile_query(text: str) -> Query:
    """Parse a CEQL query and check it (well-formed, safe): the query, or an error naming the
    variable with line and column."""
    query = parse_query(text)
    check_formula(query.formula, text)
    return query
