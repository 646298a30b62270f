"""The algebra's end-of-run hints and drawings, on their own (the commands that print them are
tested in tests/cli and tests/replay): a definition that matched nothing for want of a
namespace gets the prefix and the path written with it; a path type a CEL query names gets
its Clark form; every definition draws as text and as DOT."""

from __future__ import annotations

import pytest

from xmlevents.algebra import (
    DefinitionSet,
    NamespaceHint,
    PathType,
    namespace_hints,
    path_type_hints,
    render_dot,
    render_text,
    suggest_prefix,
)

POM = "http://maven.apache.org/POM/4.0.0"
ATOM = "http://www.w3.org/2005/Atom"
DEP = f"/{{{POM}}}project/{{{POM}}}dependencies/{{{POM}}}dependency"


def test_a_definition_without_the_namespace_gets_the_prefix_and_the_path() -> None:
    defs = DefinitionSet.parse("Added := ins(project/dependencies/dependency)")
    [hint] = namespace_hints(defs, None, {DEP: 12, f"/{{{POM}}}project": 1}, {})
    assert hint == NamespaceHint(
        definition="Added", leaf="project/dependencies/dependency", events=12,
        bindings=(("pom", POM),), bound=frozenset(),
        rewritten="pom:project/pom:dependencies/pom:dependency")
    assert hint.cli() == (
        "Added matched no event; 12 events on project/dependencies/dependency are in "
        f"namespace {POM}: pass -n pom={POM} and write "
        "pom:project/pom:dependencies/pom:dependency")
    assert hint.python().startswith("Added matched no event; 12 events on ")
    assert f"pass namespaces={{'pom': '{POM}'}} and write" in hint.python()


def test_uncounted_paths_a_bound_prefix_and_other_leaves() -> None:
    """Path types instead of counted paths (detect's): the hint has no count; a prefix bound
    already is reused; a second leaf with the same problem is counted in ``others``."""
    defs = DefinitionSet.parse("E := ins(dependency) ; upd(dependency/version/text())",
                               namespaces={"m": POM})
    paths = [PathType.parse(DEP), PathType.parse(DEP + f"/{{{POM}}}version/text()")]
    [hint] = namespace_hints(defs, {"m": POM}, paths, {})
    assert hint.events is None and hint.others == 1
    assert hint.bound == frozenset({"m"}) and hint.rewritten == "m:dependency"
    assert hint.cli() == (f"E matched no event; events on dependency are in namespace {POM}: "
                          f"write m:dependency (as -n m={POM} binds) (and likewise its other "
                          "1 path)")
    assert "(as namespaces={'m': '" in hint.python()


def test_no_hint_when_the_definition_matched_or_nothing_is_near() -> None:
    defs = DefinitionSet.parse("Added := ins(project/dependencies/dependency)")
    assert namespace_hints(defs, None, {DEP: 3}, {"Added": 1}) == []  # it matched
    assert namespace_hints(defs, None, {"/other": 3}, {}) == []  # nothing like it
    assert namespace_hints(None, None, {DEP: 3}, {}) == []
    assert namespace_hints(defs, None, {}, {}) == []


def test_two_namespaces_get_a_prefix_each() -> None:
    defs = DefinitionSet.parse("E := ins(feed/entry)")
    [hint] = namespace_hints(defs, None, {f"/{{urn:a}}feed/{{{ATOM}}}entry": 2}, {})
    assert hint.bindings == (("a", "urn:a"), ("atom", ATOM))
    assert hint.rewritten == "a:feed/atom:entry"
    assert "namespaces urn:a, " in hint.cli()


@pytest.mark.parametrize(("wanted", "expected"), [
    ("project/dependencies/dependency",
     [f"'project/dependencies/dependency' matched no event's path; events on it are in "
      f"namespace {POM}: write '{{{POM}}}project/{{{POM}}}dependencies/{{{POM}}}dependency'"]),
    (f"{{{POM}}}dependency", []),  # it matches
    ("nothing/near", []),
])
def test_a_cel_path_type_gets_its_clark_form(wanted: str, expected: list[str]) -> None:
    assert path_type_hints([wanted], [DEP]) == expected


def test_prefixes_suggested() -> None:
    assert suggest_prefix(POM) == "pom" and suggest_prefix(ATOM) == "atom"
    assert suggest_prefix("http://example.com/v2/") == "ns"
    assert suggest_prefix("urn:po", {"po": "urn:other"}) == "po2"


DRAWN = """
Ei := ins(item)
Ep := ins(item/price)
Ec := Ei ; (Ep & ins(item/quantity))
Eo := (Ec(item) & ins(shipTo)) with at=order
Em := [2,*] ins(item/note) with at=item
Ew := %(item/note) | del(item)
"""


def test_every_definition_draws_as_text_and_dot() -> None:
    defs = DefinitionSet.parse(DRAWN)
    text = render_text(defs)
    for name in ("Ei", "Ep", "Ec", "Eo", "Em", "Ew"):
        assert f"{name} := " in text
    assert "path type item (derived: item ∩lb item)" in text
    assert "path type order (given: at=order)" in text or "at=order" in text
    dot = render_dot(defs)
    assert dot.startswith("digraph xmlevents {") and dot.rstrip().endswith("}")
    assert dot.count("subgraph cluster_") == 4  # Ei and Ep are aliases of leaves: no trees
    assert "style=dashed" in dot  # a tree feeding another (Ec into Eo)
