"""The one XML name pattern (issue 28): XML 1.0 fifth edition names, in every language."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from xmlevents._foundation.names import NCNAME, is_ncname, is_qname
from xmlevents.algebra import PathType, parse
from xmlevents.rules import parse_path
from xmlevents.stream import parse_xpath

# Non-ASCII NameChars: a NameStartChar (é), and characters allowed only after the first
# (the middle dot U+00B7, a combining grave U+0300, the undertie U+203F).
_GOOD = ["a\u00b7b", "\u00e9t\u00e9", "a\u0300", "a\u203f", "_x-1.2"]
_BAD = ["-a", ".a", "1a", "\u00b7a", "\u0300a", "\u203fa"]


@given(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=4))
def test_the_pattern_agrees_with_lxml(name: str) -> None:
    """A string is an NCName exactly when lxml takes ``<NAME/>`` as an element."""
    try:
        # White space may follow the name inside the tag: the tag read must be the name.
        lxml_takes = ":" not in name and etree.fromstring(f"<{name}/>".encode()).tag == name
    except (etree.XMLSyntaxError, ValueError):
        lxml_takes = False
    assert is_ncname(name) == lxml_takes, (name, NCNAME)


@pytest.mark.parametrize("name", _GOOD)
def test_non_ascii_name_chars_are_names_in_every_language(name: str) -> None:
    """graph's paths, the rules' paths and query's XPath all take the name."""
    assert is_ncname(name) and is_qname(f"p:{name}")
    assert str(PathType.parse(f"r/{name}")) == f"r/{name}"
    assert str(parse(f"ins(r/{name})")) == f"ins(r/{name})"
    assert parse_path(f"document('d')/r/{name}") is not None
    assert str(parse_xpath(f"//{name}")).endswith(name)


@pytest.mark.parametrize("name", _BAD)
def test_a_name_cannot_start_with_a_name_char_only(name: str) -> None:
    """``-``, ``.``, digits and the NameChars that are not NameStartChars do not start a name."""
    assert not is_ncname(name)
    with pytest.raises(ValueError):
        PathType.parse(f"r/{name}")
    with pytest.raises(ValueError):
        parse_xpath(f"//{name}")
