"""XML names: the one pattern every language of xmlevents uses for an element or attribute name.

XML 1.0 (fifth edition), section 2.3, productions [4] ``NameStartChar`` and [4a] ``NameChar``;
Namespaces in XML 1.0 (third edition), productions [4] ``NCName`` (a ``Name`` without ``':'``)
and [7] ``QName`` (``prefix:local`` or ``local``). Before issue 28 seven copies of this pattern
disagreed: the algebra's path steps took ``\\w`` (so ``a·b``) while the rules' took the exact
classes and the XPath of ``xmlevents query`` took neither (it refused ``a·b``, a name a
well-formed document has). Every language now builds its name from the definitions here; a
language whose names are *not* XML names by design (CEL's attributes, the service's variables)
says why beside its own pattern, built from :data:`ASCII_NAME_START` and :data:`ASCII_NAME_CHAR`.

The regular expressions are strings, so that a tokenizer can embed them in its own master
pattern; the compiled forms and :func:`is_ncname` / :func:`is_qname` are for checks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from .lazy import LazyPattern

__all__ = [
    "NAME_START_CHAR",
    "NAME_CHAR",
    "NCNAME",
    "QNAME",
    "NCNAME_RE",
    "QNAME_RE",
    "is_ncname",
    "is_qname",
    "ASCII_NAME_START",
    "ASCII_NAME_CHAR",
    "suggest_prefix",
    "namespaces_named",
]

#: The ranges of XML's ``NameStartChar`` without ``':'`` (an NCName's first character), as the
#: body of a regular-expression character class (``f"[{NAME_START_CHAR}]"``). Python strings
#: may hold lone surrogates; the ranges stop at U+D7FF and resume at U+F900, so none is a name.
NAME_START_CHAR = ("A-Z_a-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff"
                   "\u200c-\u200d\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf"
                   "\ufdf0-\ufffd\U00010000-\U000effff")
#: The ranges of XML's ``NameChar`` without ``':'`` (any later character of an NCName): the
#: start characters and ``-``, ``.``, the digits, U+00B7 (middle dot), the combining marks
#: U+0300-U+036F and U+203F-U+2040 (undertie, character tie).
NAME_CHAR = NAME_START_CHAR + "\\-.0-9\u00b7\u0300-\u036f\u203f-\u2040"

#: An NCName (a name without a prefix), as a regular expression (no groups, no anchors).
NCNAME = f"[{NAME_START_CHAR}][{NAME_CHAR}]*"
#: A QName (``prefix:local`` or ``local``), as a regular expression (no groups, no anchors).
QNAME = f"(?:{NCNAME}:)?{NCNAME}"

# compiled on first use (some 20 ms at every start otherwise: issue 32, item 4)
NCNAME_RE = LazyPattern(NCNAME)
QNAME_RE = LazyPattern(QNAME)

#: The first character of a name that is an identifier, not an XML name, by design (CEL's
#: attribute and stream names, the service's variables: see each language's comment): the
#: ASCII part of :data:`NAME_START_CHAR`, so that such a name is still an NCName.
ASCII_NAME_START = "A-Za-z_"
#: The later characters of such an identifier: the ASCII part of :data:`NAME_CHAR` without
#: ``-`` and ``.`` (which CEL and the service's expressions use as operators).
ASCII_NAME_CHAR = "A-Za-z_0-9"


def is_ncname(name: object) -> bool:
    """Whether ``name`` is a string that is an NCName.

    >>> is_ncname("a\u00b7b"), is_ncname("\u00b7a"), is_ncname("p:a")
    (True, False, False)
    """
    return isinstance(name, str) and NCNAME_RE.fullmatch(name) is not None


def is_qname(name: object) -> bool:
    """Whether ``name`` is a string that is a QName (``local`` or ``prefix:local``).

    >>> is_qname("p:a"), is_qname("p:"), is_qname("-a")
    (True, False, False)
    """
    return isinstance(name, str) and QNAME_RE.fullmatch(name) is not None


_SEGMENT = re.compile(r"[a-z][a-z0-9_-]*")
_NOT_A_PREFIX = frozenset({"http", "https", "urn", "www", "xmlns", "ns"})


def suggest_prefix(uri: str, taken: Mapping[str, str] | None = None) -> str:
    """A prefix for ``uri``: its last meaningful segment, lower-cased (``pom`` for
    ``http://maven.apache.org/POM/4.0.0``, ``svg`` for ``http://www.w3.org/2000/svg``), else
    ``ns``; numbered if ``taken`` binds it to another URI.

    >>> suggest_prefix("http://maven.apache.org/POM/4.0.0"), suggest_prefix("urn:po")
    ('pom', 'po')
    >>> suggest_prefix("http://example.com/"), suggest_prefix("urn:po", {"po": "urn:x"})
    ('ns', 'po2')
    """
    taken = taken or {}
    prefix = "ns"
    for segment in reversed(re.split(r"[/:#?=&]+", uri)):
        s = segment.lower()
        if (_SEGMENT.fullmatch(s) and s not in _NOT_A_PREFIX and not s.startswith("xml")
                and not re.fullmatch(r"v\d+", s)):
            prefix = s
            break
    candidate, n = prefix, 1
    while taken.get(candidate, uri) != uri:
        n += 1
        candidate = f"{prefix}{n}"
    return candidate


def namespaces_named(uris: Sequence[str]) -> str:
    """``namespace U`` or ``namespaces U1, U2``: how every namespace hint names them.

    >>> namespaces_named(["urn:a"]), namespaces_named(["urn:a", "urn:b"])
    ('namespace urn:a', 'namespaces urn:a, urn:b')
    """
    return f"namespace {uris[0]}" if len(uris) == 1 else f"namespaces {', '.join(uris)}"
