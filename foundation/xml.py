"""The one hardened XML parser policy (DESIGN section 8; issue 28): no entity expansion from
input anywhere, nothing read from files or the network.

Every package that parses XML builds its parser here — the watched documents and their
snapshots (``dom``), the versions of a history (``replay``, through ``dom``), the service's
markup, the streaming queries' incremental parser (``stream``) — so that one document is
treated alike everywhere. Before, there were three policies, and ``dom``'s expanded internal
entities (a snapshot's parser, with libxml2's limits lifted, expanded them without bound).

The policy (:data:`OPTIONS`, :func:`parser`):

* ``resolve_entities=False``, ``load_dtd=False``, ``dtd_validation=False``,
  ``no_network=True``, and a resolver that answers every external DTD or entity with nothing
  (:class:`NoResolver`: libxml2 loads an external subset under some options);
* ``huge_tree`` off unless asked for text this library wrote itself (a snapshot, a copy of a
  tree in memory): it lifts libxml2's limits on depth (256) and text (10 MB);
* a document whose DTD **declares entities is refused** (:class:`EntitiesRefused`, naming
  the line of the declaration), and so is one holding a reference to an entity its parser did
  not see. Not expanding is not enough: libxml2 still expands internal entities inside
  attribute values, and the watched model has no node for an unexpanded reference. Where the
  document's bytes are at hand (:func:`parse_bytes`), a declaration is looked for before
  anything is parsed with the caller's parser, so no parser with lifted limits ever meets one.

Streaming readers look for declarations in the bytes before the root element themselves
(:data:`ENTITY_FORMS`, :data:`ENTITIES_REFUSED`), as ``stream`` does, and check the DTD they
parsed with :func:`declares_entities`.

lxml is imported by this module only, of the foundation; the algebra, which uses the standard
library alone, never imports it (its layer contract forbids lxml).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from lxml import etree

from .errors import InvalidArgumentError, XmlEventsError

__all__ = [
    "OPTIONS",
    "parser",
    "NoResolver",
    "parse_bytes",
    "check_tree",
    "declares_entities",
    "EntitiesRefused",
    "ENTITY_FORMS",
    "ENTITIES_REFUSED",
]

#: The parser options of the policy (see the module); ``huge_tree`` only by :func:`parser`'s
#: ``huge``.
OPTIONS: Mapping[str, Any] = {"resolve_entities": False, "no_network": True, "load_dtd": False,
                              "dtd_validation": False, "huge_tree": False}

#: ``<!ENTITY`` in the encodings libxml2 detects without a declaration (an ASCII-compatible
#: one, UTF-16 and UTF-32 either way round) and in EBCDIC: what a pre-scan of bytes looks for.
ENTITY_FORMS: tuple[bytes, ...] = tuple(dict.fromkeys("<!ENTITY".encode(e) for e in (
    "ascii", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "cp037")))

#: The reason every reader gives for a document whose DTD declares entities.
ENTITIES_REFUSED = ("the document's DTD declares entities, which are refused (entity "
                    "expansion bombs, external entities)")


class EntitiesRefused(etree.XMLSyntaxError, XmlEventsError, ValueError):
    """A document refused by the policy: its DTD declares entities, or it refers to one.

    An ``lxml.etree.XMLSyntaxError`` (``msg``, ``position``, ``lineno``), so that every reader
    reports it where and as it reports a malformed document; also an
    :class:`~xmlevents._foundation.errors.XmlEventsError`.
    """

    def __init__(self, reason: str, line: int = 1, column: int = 1) -> None:
        super().__init__(reason, 0, line, column)


class NoResolver(etree.Resolver):
    """Resolves every external DTD or entity to nothing: the parser reads no file and no URL
    (libxml2 loads the external subset under some options, e.g. ``collect_ids=False``)."""

    def resolve(self, system_url: str | None, public_id: str | None, context: object, /
                ) -> Any:
        return self.resolve_empty(context)


def parser(*, huge: bool = False, **options: Any) -> etree.XMLParser:
    """A parser of the policy; ``options`` add to it (``remove_blank_text``, ``encoding``,
    ``target``, ...) but cannot loosen it.

    Raises:
        InvalidArgumentError: an option that would loosen the policy.

    >>> p = parser(remove_blank_text=True)
    >>> parse_bytes(b"<a> <b/> </a>", p).getroot()[0].tag
    'b'
    """
    for key, value in options.items():
        if key in OPTIONS and value != OPTIONS[key]:
            raise InvalidArgumentError(
                f"{key}={value!r}: the hardened parser keeps {key}={OPTIONS[key]!r} (no "
                "entity expansion, DTD or network for input; DESIGN section 8)")
    made: etree.XMLParser[Any] = etree.XMLParser(**{**OPTIONS, "huge_tree": huge, **options})
    made.resolvers.add(NoResolver())
    return made


def declares_entities(tree: Any) -> bool:
    """Whether the internal subset of ``tree``'s DTD declares an entity."""
    dtd = tree.docinfo.internalDTD
    return dtd is not None and any(True for _ in dtd.iterentities())


def _line_of(data: bytes | str | None) -> int:
    """The line of the first ``<!ENTITY`` in ``data`` (1 where it cannot be told)."""
    if isinstance(data, str):
        at = data.find("<!ENTITY")
        return data.count("\n", 0, at) + 1 if at >= 0 else 1
    at = -1 if data is None else data.find(ENTITY_FORMS[0])
    return data.count(b"\n", 0, at) + 1 if data is not None and at >= 0 else 1


def check_tree(tree: Any, data: bytes | str | None = None) -> None:
    """Refuse a parsed document that declares entities or refers to one (see the module);
    ``data``, its bytes or text, to name the line of the declaration.

    Raises:
        EntitiesRefused: naming the line.
    """
    if tree.docinfo.internalDTD is None:  # no DOCTYPE: nothing declared, nothing referred to
        return
    if declares_entities(tree):
        raise EntitiesRefused(ENTITIES_REFUSED, _line_of(data))
    root = tree.getroot()
    entity = None if root is None else next(root.iter(etree.Entity), None)
    if entity is not None:  # an entity of an external subset that was not read
        raise EntitiesRefused(
            f"the document refers to the entity {entity.text}, which is not expanded (its "
            "declaration is outside the document, and nothing outside is read)",
            entity.sourceline or 1)


def parse_bytes(data: bytes, parser: etree.XMLParser, **options: Any) -> Any:
    """``etree.parse`` of ``data`` with ``parser`` (one of :func:`parser`'s), then
    :func:`check_tree`: the tree, or a refusal. Where the bytes hold ``<!ENTITY`` in any form,
    the prolog is first read with a parser of the policy whose limits stay on, so that the
    given parser (maybe with ``huge``) never meets a declaration; ``<!ENTITY`` in a comment
    or CDATA section is no declaration and passes.

    Raises:
        lxml.etree.XMLSyntaxError: malformed XML, or :class:`EntitiesRefused`.
    """
    if any(form in data for form in ENTITY_FORMS):
        probe = etree.XMLPullParser(events=("start",), **OPTIONS)
        probe.resolvers.add(NoResolver())
        for start in range(0, len(data), 1 << 16):
            probe.feed(data[start:start + (1 << 16)])
            started = next(iter(probe.read_events()), None)
            if started is not None:
                if declares_entities(started[1].getroottree()):
                    raise EntitiesRefused(ENTITIES_REFUSED, _line_of(data))
                break
    tree = etree.parse(io.BytesIO(data), parser, **options)
    check_tree(tree, data)
    return tree
