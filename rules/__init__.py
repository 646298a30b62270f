"""ECA rules on XML documents: ``on event if condition do actions`` (seed 002: Bailey,
Poulovassilis, Wood, "An Event-Condition-Action Language for XML", WWW 2002).

This package holds the rule language of the paper's section 2: its syntax tree
(:mod:`xmlevents.rules.ast`), a parser that enforces the paper's *simple XPath* and *simple
XQuery* fragments, a printer whose output parses back to the same tree, and the evaluation of
paths, conditions and constructors on lxml documents (``compile_*``).

>>> from xmlevents.rules import parse_rules
>>> rules = parse_rules('''
... rule R1 priority 2:
... on INSERT document('s.xml')/stores/store/product
... if not(document('p.xml')/products/product[@id=$delta/@id]/store[@id=$delta/../@id])
... do INSERT <store id='{$delta/../@id}'/>
...    BELOW document('p.xml')/products/product[@id=$delta/@id] AFTER TRUE
... ''')
>>> print(rules["R1"].condition)
not(document('p.xml')/products/product[@id=$delta/@id]/store[@id=$delta/../@id])
"""

from . import ast
from ._analysis import Analysis, Arc, Graph, Verdict, analyse, decompose, self_disactivating
from ._errors import RuleError, RuleSyntaxError, UnknownDocumentError
from ._execute import ActionError, StepLimitError, TraceStep, UpdateError
from ._parser import MAX_DEPTH, parse_action, parse_condition, parse_path, parse_rule, parse_rules
from ._printer import quote, to_text
from ._store import BoundRules, Store
from ._xpath import (
    CompiledCondition,
    CompiledContent,
    CompiledPath,
    CompiledQualifier,
    Documents,
    SelectedNode,
    compile_condition,
    compile_content,
    compile_path,
    compile_qualifier,
    string_value,
)
from .ast import Path, Rule, RuleSet

__all__ = [
    # the syntax tree (every node class is in xmlevents.rules.ast)
    "ast", "Rule", "RuleSet", "Path",
    # text
    "parse_rules", "parse_rule", "parse_path", "parse_condition", "parse_action", "to_text",
    "quote", "MAX_DEPTH",
    # evaluation on lxml documents
    "compile_path", "compile_condition", "compile_qualifier", "compile_content", "CompiledPath",
    "CompiledCondition", "CompiledQualifier", "CompiledContent", "SelectedNode", "Documents",
    "string_value",
    # static analysis (section 3)
    "analyse", "Analysis", "Graph", "Arc", "Verdict", "decompose", "self_disactivating",
    # execution (section 2.6)
    "Store", "BoundRules", "TraceStep",
    # errors
    "RuleSyntaxError", "RuleError", "UnknownDocumentError", "UpdateError", "StepLimitError",
    "ActionError",
]
