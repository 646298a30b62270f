"""CEL: complex event queries with selection strategies (seed 003, Grez, Riveros, Ugarte,
Bucchi, *Foundations of Complex Event Processing*, PVLDB 2018), written in CORE's CEQL.

The language (:mod:`.ast`: CEQL parsed with positions; the paper's well-formedness and safety
checked when compiled), the LP normal form (:func:`to_lp`), the reference evaluator of the
denotational semantics with the selection strategies, windows and partitions
(:func:`reference`), event sources (JSON lines, CSV under CORE's stream declarations, the
project's primitive events), and the automaton evaluator (:func:`evaluate`, :func:`count`).
"""

from ._cea import Evaluation, check_automaton, compile_cea, count, evaluate
from ._checks import (
    bound,
    check_attributes,
    check_formula,
    defined,
    defined_outside,
    path_types,
)
from ._core import from_nanoseconds, translate
from ._errors import CELQueryError, CELSyntaxError, StreamError
from ._events import Event, Value, fits, partition_key
from ._lp import is_lp, is_unary_query, to_lp
from ._parser import parse_formula, parse_query
from ._predicates import Predicate
from ._reference import reference, select
from ._sources import (
    PRIMITIVE_SCHEMA,
    Schema,
    parse_schema,
    primitive_event,
    read_csv,
    read_jsonl,
    read_primitive,
)
from .ast import (
    As,
    ContiguousPlus,
    ContiguousSeq,
    EventType,
    Filter,
    Formula,
    Match,
    Not,
    Or,
    Plus,
    Query,
    Seq,
    Strategy,
    Window,
)

__all__ = [
    "Formula", "EventType", "As", "Seq", "ContiguousSeq", "Or", "Not", "Plus",
    "ContiguousPlus",
    "Filter", "Predicate", "Strategy", "Window", "Query", "Match", "Event", "Value",
    "parse_query", "parse_formula", "compile_query", "check_formula", "check_attributes",
    "bound", "defined", "defined_outside", "path_types", "to_lp", "is_lp", "is_unary_query", "fits",
    "partition_key",
    "reference", "select", "read_jsonl", "read_csv", "read_primitive", "parse_schema",
    "Schema", "PRIMITIVE_SCHEMA", "primitive_event", "evaluate", "count", "Evaluation",
    "compile_cea", "check_automaton", "from_nanoseconds",
    "CELSyntaxError", "CELQueryError", "StreamError",
]


def compile_query(text: str, schema: Schema | None = None, *,
                  dialect: str = "paper") -> Query:
    """Parse a CEQL query and check it: well-formed and safe (section 5.1), every selected
    variable defined, and, with a ``schema`` (event type -> attribute -> type), every event
    type declared and every filtered attribute declared by its variable's type.

    ``dialect="core"`` reads CORE's CEQL as CORE evaluates it (issue 32; ``AS`` on any
    formula, names as labels of events, ``NOT``, CORE's default window and integer
    division): the query returned is its translation to the paper's CEL (see
    ``docs/semantics.md``, "The core dialect").

    Raises:
        CELSyntaxError: the text does not parse (line and column).
        CELQueryError: not well-formed, not safe, or an unknown type or attribute, naming the
            variable with line and column.
        ValueError: an unknown ``dialect``.
    """
    query = parse_query(text, dialect)
    if dialect == "core":
        query = translate(query, text, schema)
    check_formula(query.formula, text)
    if query.variables:
        known = defined(query.formula)
        for name in query.variables:
            if name not in known:
                hint = ""
                if any(isinstance(g, EventType) and g.name == name
                       for g in query.formula.walk()):
                    hint = (f"; CORE reads the type's name {name} as a label of every {name} "
                            "event, named with AS or not; use --dialect core "
                            "(dialect=\"core\")")
                raise CELQueryError(f"SELECT names {name}, which the pattern does not "
                                    f"define (T AS {name}){hint}", line=None, column=None)
    if schema is not None:
        check_attributes(query.formula, schema, text)
    return query
