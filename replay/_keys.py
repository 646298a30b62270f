"""Keys: how elements are identified across versions, as XML Schema's ``xs:key`` (issue 14).

A key is declared as text, ``ELEMENT=FIELD[,FIELD...]``, e.g.
``pom:dependency=pom:groupId,pom:artifactId``: an element's name (one step), then the paths,
relative to that element, of the values that identify it — child element steps separated by
``/`` (the value is the element's text content, whitespace-stripped), or an attribute ``@name``
as the last step (its value, whitespace-stripped). Names are QNames with a prefix bound in the
namespaces given (unprefixed: no namespace; ``xml`` is always bound) or Clark names
``{uri}name``.

An element whose tag is a key's element is *keyed* when at least one field is present; its key
value is the tuple of the fields' values, a missing field being ``None``. The replay's matcher
(:mod:`._match`) treats keyed elements with equal values as the same node across versions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._errors import KeySpecError

__all__ = ["KeyField", "Key", "KeyNote", "KeyValue"]

XML_NS = "http://www.w3.org/XML/1998/namespace"

#: A key value: one entry per field, ``None`` where the field is absent.
KeyValue = tuple[str | None, ...]

_NCNAME = re.compile(r"[^\W\d][\w.\-]*")


def _local(name: str) -> str:
    """``{uri}local`` -> ``local``."""
    return name.rsplit("}", 1)[-1]


@dataclass(frozen=True)
class KeyField:
    """One field of a key: child element steps (Clark names), then optionally an attribute."""

    steps: tuple[str, ...] = ()
    attribute: str | None = None

    def value(self, element: Any) -> str | None:
        """The field's value under ``element`` (whitespace-stripped), None if it is absent."""
        node = element
        for step in self.steps:
            node = next(node.iterchildren(step), None)
            if node is None:
                return None
        if self.attribute is not None:
            found = node.get(self.attribute)
            return None if found is None else str(found).strip()
        return "".join(node.itertext()).strip()

    def __str__(self) -> str:
        return "/".join([*self.steps, *([f"@{self.attribute}"] if self.attribute else [])])

    @property
    def label(self) -> str:
        """The field with local names only, for messages."""
        return "/".join([*map(_local, self.steps),
                         *([f"@{_local(self.attribute)}"] if self.attribute else [])])


@dataclass(frozen=True)
class Key:
    """An element's name (Clark notation) and the fields whose values identify it.

    ``str(key)`` is its declaration in Clark notation, which :meth:`parse` reads back.
    """

    element: str
    fields: tuple[KeyField, ...]

    @classmethod
    def parse(cls, text: str, namespaces: dict[str, str] | None = None) -> Key:
        """The key declared by ``text`` (see the module), its prefixes bound by
        ``namespaces``.

        Raises:
            KeySpecError: naming the column where ``text`` goes wrong (no ``=``, an empty
                element or field, a bad step, an unbound prefix).
        """
        return _Parser(text, namespaces or {}).key()

    def value(self, element: Any) -> KeyValue | None:
        """The key value of ``element`` (whose tag is :attr:`element`), or None when it has
        none of the fields (it is then unkeyed)."""
        if len(self.fields) == 1:  # the common case, without the generators
            one = self.fields[0].value(element)
            return None if one is None else (one,)
        value = tuple(f.value(element) for f in self.fields)
        return None if all(v is None for v in value) else value

    def __str__(self) -> str:
        return f"{self.element}={','.join(map(str, self.fields))}"

    def declaration(self, namespaces: Mapping[str, str] | None = None) -> str:
        """The key as :meth:`parse` reads it with ``namespaces``: a name whose URI one of
        them binds with its prefix (the first, by prefix), other names in Clark notation."""
        prefixes: dict[str, str] = {}
        for prefix, uri in sorted((namespaces or {}).items()):
            prefixes.setdefault(uri, prefix)

        def name(clark: str) -> str:
            if clark.startswith("{"):
                uri, local = clark[1:].split("}", 1)
                if uri in prefixes:
                    return f"{prefixes[uri]}:{local}"
                if uri == XML_NS:
                    return f"xml:{local}"
            return clark

        def field(f: KeyField) -> str:
            steps = [name(s) for s in f.steps]
            if f.attribute is not None:
                steps.append("@" + name(f.attribute))
            return "/".join(steps)

        return f"{name(self.element)}={','.join(field(f) for f in self.fields)}"

    @property
    def path_end(self) -> str:
        """How the path of an event at an element this key names ends (Clark notation, as
        the rows write paths): how a replay counts what a key selected."""
        return "/" + self.element

    def selects(self, path: str) -> bool:
        """Whether an event at ``path`` is at an element this key names."""
        return path.endswith(self.path_end)

    def nothing_selected(self) -> str:
        """The warning for a key that named no element in any version."""
        return (f"key {self.label} selected nothing: no version has an element "
                f"{self.element} (0 elements); check its name and its prefix")

    @property
    def label(self) -> str:
        """The key with local names only (``dependency=groupId,artifactId``), for messages."""
        return f"{_local(self.element)}={','.join(f.label for f in self.fields)}"


@dataclass(frozen=True)
class KeyNote:
    """Siblings that share a key value in one version of a diff (``side``: ``"old"`` or
    ``"new"``): they are matched by similarity, not by the key. ``paths`` name them
    (``/project/dependencies/dependency[3]``)."""

    side: str
    key: Key
    value: KeyValue
    paths: tuple[str, ...]

    def message(self) -> str:
        """The note as one line (the ``message`` of an error row)."""
        shown = ", ".join(f"{f.label}={v!r}" for f, v in zip(self.key.fields, self.value,
                                                              strict=True))
        return (f"key {self.key.label}: {len(self.paths)} siblings have {shown} "
                f"({', '.join(self.paths)}); they are matched by similarity, not by the key")


class _Parser:
    """A recursive-descent reader of one key declaration, tracking the column."""

    def __init__(self, text: str, namespaces: dict[str, str]) -> None:
        self.text, self.pos = text, 0
        self.namespaces = {"xml": XML_NS, **namespaces}

    def fail(self, message: str, pos: int | None = None) -> KeySpecError:
        where = self.pos if pos is None else pos
        return KeySpecError(self.text, message, where + 1)

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def key(self) -> Key:
        self.skip()
        if self.peek() == "=":
            raise self.fail("no element name before '=' (ELEMENT=FIELD[,FIELD...])")
        element = self.name("the element's name")
        self.skip()
        if not self.peek():
            raise self.fail("no '=' after the element's name: a key is ELEMENT=FIELD[,FIELD"
                            "...], e.g. pom:dependency=pom:groupId,pom:artifactId")
        if self.peek() == "/":
            raise self.fail("the element is one name, not a path (its fields are paths)")
        if self.peek() != "=":
            raise self.fail(f"expected '=' after the element's name, found {self.peek()!r}")
        self.pos += 1
        fields = [self.field()]
        while self.peek() == ",":
            self.pos += 1
            fields.append(self.field())
        if self.pos < len(self.text):
            raise self.fail(f"expected ',' or '/' or the end, found {self.peek()!r}")
        return Key(element, tuple(fields))

    def field(self) -> KeyField:
        self.skip()
        if self.peek() in ("", ","):
            raise self.fail("empty field: each field is a child path or an @attribute")
        steps: list[str] = []
        while True:
            if self.peek() == "@":
                self.pos += 1
                attribute = self.name("an attribute name")
                self.skip()
                if self.peek() == "/":
                    raise self.fail("an attribute ends its field: nothing can follow it")
                return KeyField(tuple(steps), attribute)
            steps.append(self.name("a child element's name"))
            self.skip()
            if self.peek() != "/":
                return KeyField(tuple(steps))
            self.pos += 1
            self.skip()

    def name(self, what: str) -> str:
        """A QName or a Clark name at the current position, as a Clark name."""
        self.skip()
        start = self.pos
        if self.peek() == "{":
            end = self.text.find("}", start)
            if end < 0:
                raise self.fail("'{' without its '}' (Clark notation is {uri}name)")
            uri = self.text[start + 1:end]
            self.pos = end + 1
            return f"{{{uri}}}{self.ncname(what)}" if uri else self.ncname(what)
        first = self.ncname(what)
        if self.peek() != ":":
            return first
        self.pos += 1
        local = self.ncname(what)
        bound = self.namespaces.get(first)
        if bound is None:
            raise self.fail(f"prefix {first!r} is not bound: bind it with -n {first}=URI "
                            "(in Python: namespaces={" f"{first!r}: URI}})", start)
        return f"{{{bound}}}{local}"

    def ncname(self, what: str) -> str:
        found = _NCNAME.match(self.text, self.pos)
        if found is None:
            shown = f"found {self.peek()!r}" if self.peek() else "found the end"
            raise self.fail(f"expected {what}, {shown}")
        self.pos = found.end()
        return found.group()
