"""The end-of-run namespace hint (issue 15, item 1): a definition that matched nothing because
its paths name no namespace while the documents' elements are in one."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from xmlevents.algebra import DefinitionSet, suggest_prefix
from xmlevents.replay import NamespaceHint, NamespaceWarning, namespace_hints, replay_history

POM = "http://maven.apache.org/POM/4.0.0"


def pom_history(namespace: str = POM) -> list[dict[str, object]]:
    """Three versions of a POM whose elements are in ``namespace``: two dependencies added."""
    def dep(artifact: str) -> str:
        return (f"<dependency><groupId>org.x</groupId><artifactId>{artifact}</artifactId>"
                "</dependency>")

    def pom(*artifacts: str) -> str:
        return (f'<project xmlns="{namespace}"><dependencies>'
                f"{''.join(dep(a) for a in artifacts)}</dependencies></project>")

    return [{"doc": "pom.xml", "version": v, "xml": x}
            for v, x in enumerate([pom(), pom("a"), pom("a", "b")])]


DEFS = "DependencyAdded := ins(project/dependencies/dependency)"


def test_replay_history_warns_with_the_namespaces_argument() -> None:
    """Without namespaces= the definition matches nothing: a NamespaceWarning says how many
    events are on its path in which namespace, the argument to pass and the path to write."""
    with pytest.warns(NamespaceWarning) as caught:
        result = replay_history(pom_history(), DEFS)
    assert result.composites == []
    [warning] = caught
    assert str(warning.message) == (
        "DependencyAdded matched no event; 2 events on project/dependencies/dependency are in "
        f"namespace {POM}: pass namespaces={{'pom': '{POM}'}} and write "
        "pom:project/pom:dependencies/pom:dependency")
    assert warning.filename == __file__  # said where replay_history was called


def test_the_fix_the_warning_gives_works() -> None:
    """With the prefix bound and the path written as the hint says: composites, no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = replay_history(pom_history(), "DependencyAdded := "
                                "ins(pom:project/pom:dependencies/pom:dependency)",
                                namespaces={"pom": POM})
    assert len(result.composites) == 2


def test_a_relative_path_and_a_prefix_already_bound() -> None:
    """A relative leaf matches the end of a path; a URI bound already keeps its prefix, and
    the hint then only says how to write the path."""
    with pytest.warns(NamespaceWarning, match=r"2 events on dependency are in namespace "
                      rf"{POM}: write m:dependency \(as namespaces=\{{'m': '{POM}'\}} binds\)"):
        replay_history(pom_history(), "D := ins(dependency)", namespaces={"m": POM})


@pytest.mark.parametrize("defs", [
    "D := ins(project/plugins/plugin)",  # no such path in any namespace
    "D := ins(dependency) ; del(dependency)",  # its leaves' paths match, it just never fires
])
def test_no_hint_when_the_namespace_is_not_the_reason(defs: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = pom_history(namespace="") if "del" in defs else pom_history()
        replay_history([{**r, "xml": str(r["xml"]).replace(' xmlns=""', "")} for r in rows],
                       defs)


def test_the_hints_facts_and_both_phrasings() -> None:
    """namespace_hints from event paths and composite counts (what the Spark job gives it),
    one hint per definition, the first leaf as the example and the others counted."""
    paths = {f"/{{{POM}}}project/{{{POM}}}dependencies/{{{POM}}}dependency": 1234,
             f"/{{{POM}}}project/{{{POM}}}dependencies/{{{POM}}}dependency/@scope": 3,
             f"/{{{POM}}}project/{{{POM}}}version/text()": 7}
    defs = DefinitionSet.parse(
        "X := ins(project/dependencies/dependency) ; "
        "upd(project/dependencies/dependency/@scope)\n"
        "V := upd(/project/version/text())\n"
        "Ok := ins(nothing/here)")
    hints = namespace_hints(defs, {}, paths, {"Ok": 0})
    assert [h.definition for h in hints] == ["X", "V"]
    x, v = hints
    assert x == NamespaceHint("X", "project/dependencies/dependency", 1234, (("pom", POM),),
                              frozenset(), "pom:project/pom:dependencies/pom:dependency", 1)
    assert x.cli() == (
        f"X matched no event; 1,234 events on project/dependencies/dependency are in "
        f"namespace {POM}: pass -n pom={POM} and write "
        "pom:project/pom:dependencies/pom:dependency (and likewise its other 1 path)")
    assert v.rewritten == "/pom:project/pom:version/text()"
    assert v.python().startswith("V matched no event; 7 events on /project/version/text()")
    # a definition that raised composites needs no hint
    assert namespace_hints(defs, {}, paths, {"X": 1, "V": 2}) == []


def test_events_in_two_namespaces_get_a_prefix_each() -> None:
    paths = {"/{urn:a}root/{http://example.com/}item": 2}
    [hint] = namespace_hints(DefinitionSet.parse("E := ins(root/item)"), {"a": "urn:other"},
                             paths, {})
    assert hint.bindings == (("a2", "urn:a"), ("ns", "http://example.com/"))
    assert hint.rewritten == "a2:root/ns:item"
    assert "-n a2=urn:a -n ns=http://example.com/" in hint.cli()


@pytest.mark.parametrize(("uri", "prefix"), [
    (POM, "pom"),
    ("http://www.w3.org/2000/svg", "svg"),
    ("http://www.w3.org/1999/xhtml", "xhtml"),
    ("urn:oasis:names:tc:xliff:document:1.2", "document"),
    ("http://example.com/", "ns"),
    ("http://example.com/schemas/v2", "schemas"),
    ("urn:x:XMLThing", "x"),  # no prefix starts with xml
])
def test_the_prefix_is_the_uris_last_meaningful_segment(uri: str, prefix: str) -> None:
    assert suggest_prefix(uri) == prefix


@pytest.mark.slow
def test_the_spark_job_reports_the_same_hint(spark: Any, tmp_path: Path) -> None:
    """On Spark the hint comes from the events frame's paths and counts: the same one."""
    from xmlevents.replay import run_spark, write_versions

    write_versions(pom_history(), tmp_path / "pom.jsonl")
    report = run_spark(spark, str(tmp_path / "pom.jsonl"), str(tmp_path / "out"), DEFS)
    [hint] = report.hints
    assert hint.cli() == (
        "DependencyAdded matched no event; 2 events on project/dependencies/dependency are in "
        f"namespace {POM}: pass -n pom={POM} and write "
        "pom:project/pom:dependencies/pom:dependency")
