"""Keys and unique tags in the replay's matching (issue 14, items 1 and 2).

* key declarations: parsing, Clark names, errors with their columns, ``str`` round trips;
* keyed identity: a dependency moved between ``dependencies`` blocks, reordered, or surrounded
  by reformatting keeps its ids; one removed and later re-added, or whose key changed, is a new
  node; key values repeated among siblings are reported (version, element, value), never fatal;
* unique tags: a version bump or new children never rename a uniquely tagged element;
* a hypothesis property: random keyed documents and random edit sequences replay exactly, every
  key kept from one version to the next keeps its ids, and the keys inserted with new ids are
  exactly the keys each version adds;
* the command line's ``--key`` (bad declarations refused before Spark starts) and, on Spark,
  the same notes as error rows.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from lxml import etree

from tests.strategies import examples
from xmlevents._cli import main
from xmlevents.algebra import Op
from xmlevents.dom import Replayer, Snapshot
from xmlevents.replay import (
    DiffOptions,
    DocumentHistory,
    Key,
    KeyField,
    KeyNote,
    KeySpecError,
    KeyWarning,
    Move,
    Rename,
    apply_script,
    c14n,
    edit_script,
    key_notes,
    parse_version,
    replay_history,
)
from xmlevents.replay._match import KeyedDiffer

NS = "http://maven.apache.org/POM/4.0.0"
NAMESPACES = {"pom": NS}
DEP_KEY = "pom:dependency=pom:groupId,pom:artifactId"
DEP = f"{{{NS}}}dependency"


def keyed() -> DiffOptions:
    return DiffOptions(keys=(Key.parse(DEP_KEY, NAMESPACES),))


# --- declarations --------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "element", "fields"), [
    (DEP_KEY, DEP, (KeyField((f"{{{NS}}}groupId",)), KeyField((f"{{{NS}}}artifactId",)))),
    ("item=@sku", "item", (KeyField((), "sku"),)),
    (" item = a / b , @pom:x , c/@y ", "item",
     (KeyField(("a", "b")), KeyField((), f"{{{NS}}}x"), KeyField(("c",), "y"))),
    ("{urn:x=y,z}e={urn:x=y,z}f", "{urn:x=y,z}e", (KeyField(("{urn:x=y,z}f",)),)),
    ("e=@xml:id", "e", (KeyField((), "{http://www.w3.org/XML/1998/namespace}id"),)),
])
def test_a_key_declaration_parses(text: str, element: str, fields: tuple[KeyField, ...]) -> None:
    """Names are QNames (bound prefixes, unprefixed: no namespace) or Clark names; fields are
    child paths or attributes; blanks around the separators are allowed."""
    key = Key.parse(text, NAMESPACES)
    assert key == Key(element, fields)
    assert Key.parse(str(key)) == key


@pytest.mark.parametrize(("text", "column", "words"), [
    ("pom:dependency", 15, "no '='"),
    ("dependency groupId", 12, "expected '='"),
    ("=groupId", 1, "no element name"),
    ("dependency=", 12, "empty field"),
    ("dependency=groupId,", 20, "empty field"),
    ("dependency=,groupId", 12, "empty field"),
    ("mvn:dependency=groupId", 1, "prefix 'mvn' is not bound: bind it with -n mvn=URI"),
    ("dependency=groupId,mvn:artifactId", 20, "prefix 'mvn' is not bound"),
    ("a/b=c", 2, "one name, not a path"),
    ("a=@x/b", 5, "an attribute ends its field"),
    ("a=b c", 5, "expected ',' or '/'"),
    ("a=1b", 3, "expected a child element's name, found '1'"),
    ("a=b/", 5, "expected a child element's name, found the end"),
    ("a=@", 4, "expected an attribute name"),
    ("{urn:x", 1, "'{' without its '}'"),
    ("", 1, "expected the element's name"),
])
def test_a_bad_key_declaration_names_its_column(text: str, column: int, words: str) -> None:
    """Every refusal is a KeySpecError (a ValueError) naming the column where it goes wrong."""
    with pytest.raises(KeySpecError) as caught:
        Key.parse(text, NAMESPACES)
    assert caught.value.column == column, str(caught.value)
    assert words in str(caught.value)
    assert f"column {column}" in str(caught.value)
    assert isinstance(caught.value, ValueError)


NAMES = st.sampled_from(["a", "b-c", "d.e", "_f", "{urn:x}g", "{http://h/i?j=k,l}m"])


@given(NAMES, st.lists(st.tuples(st.lists(NAMES, max_size=2), st.none() | NAMES),
                       min_size=1, max_size=3))
def test_str_of_a_key_parses_back_to_it(element: str, fields: list[tuple[list[str], Any]]
                                        ) -> None:
    """``str(key)`` (Clark notation) round-trips through ``Key.parse``, namespaces or not."""
    built = tuple(KeyField(tuple(steps), attr) for steps, attr in fields if steps or attr)
    if not built:
        built = (KeyField(("a",)),)
    key = Key(element, built)
    assert Key.parse(str(key)) == key
    assert Key.parse(str(key), NAMESPACES) == key


def test_a_key_value_has_one_entry_per_field() -> None:
    """Values are stripped texts or attributes; a missing field is None; an element missing
    every field is unkeyed (None)."""
    key = Key.parse("d=g,a/b,@k")
    d = etree.fromstring('<d k=" 7 "><g>\n  org.x <!--c--> </g><a><b>y<i>z</i></b></a></d>')
    assert key.value(d) == ("org.x", "yz", "7")
    assert key.value(etree.fromstring("<d><g>x</g></d>")) == ("x", None, None)
    assert key.value(etree.fromstring("<d><g/></d>")) == ("", None, None)
    assert key.value(etree.fromstring("<d><v>1</v></d>")) is None


def test_options_with_keys_travel_and_refuse_two_keys_for_one_element() -> None:
    """DiffOptions stays a frozen, picklable value (it goes to Spark's workers)."""
    keys: Any = [Key.parse(DEP_KEY, NAMESPACES)]  # a list is taken, kept as a tuple
    options = DiffOptions(keys=keys, unique_tags=False)
    assert isinstance(options.keys, tuple)
    assert pickle.loads(pickle.dumps(options)) == options
    assert hash(options) == hash(pickle.loads(pickle.dumps(options)))
    with pytest.raises(KeySpecError, match="a second key"):
        DiffOptions(keys=(Key.parse("a=b"), Key.parse("a=c")))


# --- keyed identity ------------------------------------------------------------------------


def dep(g: str, a: str, v: str = "1.0", indent: str = "\n      ") -> str:
    inner = indent + "  "
    return (f"{indent}<dependency>{inner}<groupId>{g}</groupId>{inner}<artifactId>{a}"
            f"</artifactId>{inner}<version>{v}</version>{indent}</dependency>")


def pom(deps: list[str], managed: list[str] | None = None, version: str = "1.0",
        extra: str = "") -> str:
    """A POM-like document (the POM namespace, indented) with these dependency blocks."""
    return (f'<project xmlns="{NS}">\n  <version>{version}</version>{extra}\n'
            f"  <dependencies>{''.join(deps)}\n  </dependencies>\n"
            f"  <dependencyManagement>\n    <dependencies>{''.join(managed or [])}\n    "
            "</dependencies>\n  </dependencyManagement>\n</project>")


def ids_by_key(history: DocumentHistory) -> dict[tuple[str, str], str | None]:
    """Each dependency's (groupId, artifactId) with its node id in the document now."""
    doc = history.document
    return {(d.findtext(f"{{{NS}}}groupId"), d.findtext(f"{{{NS}}}artifactId")): doc.id_of(d)
            for d in doc.getroot().iter(DEP)}


def replays_to(snap: Snapshot, events: list[Any], xml: str) -> bool:
    replayer = Replayer(snap)
    replayer.apply_all(events)
    return bool(c14n(replayer.tree.getroot()) == c14n(parse_version(xml)))


def inserted(events: list[Any], tag: str = DEP) -> list[str]:
    """The ids of the elements ``tag`` the events insert (a move re-inserts its ids)."""
    return [e.pi.ids[-1] for e in events
            if e.op is Op.INS and e.pi.pt.steps[-1].name == tag]


def run(versions: list[str], options: DiffOptions | None = None
        ) -> list[tuple[dict[tuple[str, str], str | None], list[Any], bool]]:
    """Each version's dependency ids, events and whether they replay to it."""
    history = DocumentHistory("pom.xml", options=options or keyed())
    out = []
    try:
        for v, xml in enumerate(versions):
            snap = history.document.snapshot()
            r = history.advance(v, xml)
            assert r.synced == 0
            out.append((ids_by_key(history), r.events, replays_to(snap, r.events, xml)))
    finally:
        history.close()
    return out


def test_a_dependency_moved_between_blocks_keeps_its_ids() -> None:
    """Moved from dependencies to dependencyManagement (and another the other way): a move,
    the same ids, no new dependency."""
    v0 = pom([dep("org.a", "x"), dep("org.b", "y"), dep("org.c", "z")],
             [dep("org.d", "w", indent="\n        ")])
    v1 = pom([dep("org.b", "y"), dep("org.d", "w")],
             [dep("org.c", "z", indent="\n        "), dep("org.a", "x", "2.0", "\n        ")])
    (ids0, _, ok0), (ids1, events, ok1) = run([v0, v1])
    assert ok0 and ok1
    assert ids1 == ids0
    assert set(inserted(events)) <= set(ids0.values())  # re-insertions only: moves
    assert inserted(events)


def test_reordered_dependencies_keep_their_ids() -> None:
    """A reversed block, with versions changed on the way: the same ids, only moves."""
    keys = [("org.a", "x"), ("org.b", "y"), ("org.c", "z"), ("org.d", "w")]
    v0 = pom([dep(g, a) for g, a in keys])
    v1 = pom([dep(g, a, f"{i}.0") for i, (g, a) in enumerate(reversed(keys))])
    (ids0, _, _), (ids1, events, ok) = run([v0, v1])
    assert ok and ids1 == ids0
    assert set(inserted(events)) <= set(ids0.values())


def test_reformatting_around_dependencies_keeps_their_ids() -> None:
    """Re-indented, commented, with new elements around them and a new child: the same ids;
    the new elements are the only insertions."""
    v0 = pom([dep("org.a", "x"), dep("org.b", "y")])
    spaced = [dep("org.a", "x", indent="\n\t\t").replace(
        "</version>", "</version>\n\t\t\t<scope>test</scope>"),
        "\n<!-- pinned -->", dep("org.b", "y", indent="\n    ")]
    v1 = pom(spaced, extra="\n  <name>lang</name>\n  <url>u</url>")
    (ids0, _, _), (ids1, events, ok) = run([v0, v1])
    assert ok and ids1 == ids0
    assert inserted(events) == []
    assert {e.pi.pt.steps[-1].name for e in events if e.op is Op.INS and
            len(e.pi.pt.steps) in (2, 4)} >= {f"{{{NS}}}name", f"{{{NS}}}scope"}


def test_a_dependency_removed_and_added_again_is_a_new_node() -> None:
    """Removed in one version, back in the next: inserted with new ids."""
    v0 = pom([dep("org.a", "x"), dep("org.b", "y")])
    v1 = pom([dep("org.b", "y")])
    (ids0, _, _), (ids1, _, _), (ids2, events, ok) = run([v0, v1, v0])
    assert ok
    assert ("org.a", "x") not in ids1 and ids2[("org.b", "y")] == ids0[("org.b", "y")]
    assert ids2[("org.a", "x")] != ids0[("org.a", "x")]
    assert inserted(events) == [ids2[("org.a", "x")]]


def test_a_changed_key_is_another_dependency() -> None:
    """An artifactId changed: keyed, the old dependency is removed and a new one inserted;
    unkeyed, xmldiff calls it an update of the same node."""
    v0 = pom([dep("org.a", "x", "1.0"), dep("org.b", "y")])
    v1 = pom([dep("org.a", "x2", "1.0"), dep("org.b", "y")])
    (ids0, _, _), (ids1, events, ok) = run([v0, v1])
    assert ok and inserted(events) == [ids1[("org.a", "x2")]]
    assert ids1[("org.a", "x2")] not in ids0.values()
    (plain0, _, _), (plain1, plain_events, _) = run([v0, v1], DiffOptions())
    assert inserted(plain_events) == [] and plain1[("org.a", "x2")] == plain0[("org.a", "x")]


def test_nothing_of_a_removed_dependency_becomes_part_of_something_else() -> None:
    """A dependency removed while a plugin with its coordinates appears: keyed, no node of
    the dependency is moved or renamed into the plugin (unkeyed, xmldiff turns the
    dependencies block into the build)."""
    v0 = pom([dep("org.a", "x", "1.0"), dep("org.b", "y")])
    v1 = pom([dep("org.b", "y")], extra="\n  <build><plugins><plugin><groupId>org.a</groupId>"
             "<artifactId>x</artifactId><version>1.0</version></plugin></plugins></build>")
    assert any(isinstance(a, Rename) for a in edit_script(v0, v1))
    assert [a for a in edit_script(v0, v1, keyed()) if isinstance(a, (Move, Rename))] == []


def test_repeated_key_values_are_reported_and_left_to_similarity() -> None:
    """Two siblings with one key value: a note per version (the paths, the value), an error
    row with stage "key" per version in replay_history; the replay is still exact."""
    twice = [dep("org.a", "x"), dep("org.b", "y"), dep("org.a", "x", "2.0")]
    v0, v1 = pom(twice), pom(list(reversed(twice)), [dep("org.c", "z")])
    notes: list[KeyNote] = []
    script = edit_script(v0, v1, keyed(), notes)
    key = Key.parse(DEP_KEY, NAMESPACES)
    assert notes == [
        KeyNote("old", key, ("org.a", "x"), ("/project/dependencies/dependency[1]",
                                             "/project/dependencies/dependency[3]")),
        KeyNote("new", key, ("org.a", "x"), ("/project/dependencies/dependency[1]",
                                             "/project/dependencies/dependency[3]"))]
    tree = parse_version(v0).getroottree()
    apply_script(tree, script)
    assert c14n(tree.getroot()) == c14n(parse_version(v1))
    assert key_notes(parse_version(v1), [key]) == notes[1:]
    message = notes[0].message()
    assert "groupId='org.a', artifactId='x'" in message
    assert "/project/dependencies/dependency[3]" in message
    rows = [{"doc": "pom.xml", "version": v, "xml": x} for v, x in enumerate([v0, v1, v1])]
    result = replay_history(rows, options=keyed())
    assert [(e["doc"], e["version"], e["stage"]) for e in result.errors] == [
        ("pom.xml", 0, "key"), ("pom.xml", 1, "key"), ("pom.xml", 2, "key")]
    assert result.versions == 3
    (_, _, ok0), (_, _, ok1) = run([v0, v1])
    assert ok0 and ok1


def test_a_key_unique_among_siblings_but_not_in_the_document_keeps_its_ids() -> None:
    """The same coordinates in two blocks: matched among the siblings of each block."""
    v0 = pom([dep("org.a", "x")], [dep("org.a", "x")])
    v1 = pom([dep("org.b", "y"), dep("org.a", "x", "3")], [dep("org.a", "x", "4")])
    history = DocumentHistory("pom.xml", options=keyed())
    try:
        history.advance(0, v0)
        before = [history.document.id_of(d) for d in history.document.getroot().iter(DEP)]
        r = history.advance(1, v1)
        after = [history.document.id_of(d) for d in history.document.getroot().iter(DEP)]
    finally:
        history.close()
    assert after[1:] == before and len(inserted(r.events)) == 1


# --- unique tags -----------------------------------------------------------------------------


def test_a_version_bump_is_an_update_not_a_rename() -> None:
    """A new element whose text looks like the old version's: xmldiff alone renames the
    version into it; matched by its unique tag, the version is updated."""
    old = "<p><version>1.0.0-SNAPSHOT</version></p>"
    new = "<p><name>1.0.0-SNAPSHOT</name><version>2.0</version></p>"
    assert any(isinstance(a, Rename) for a in edit_script(old, new,
                                                          DiffOptions(unique_tags=False)))
    script = edit_script(old, new)
    assert not any(isinstance(a, (Rename, Move)) for a in script), script


CONTRIBUTORS = [
    ("<project><profiles><profile><id>a</id></profile></profiles><contributors><contributor>"
     "<name>A</name></contributor><contributor><name>B</name></contributor></contributors>"
     "</project>",
     "<project><profiles><profile><id>a</id></profile><profile><id>b</id></profile>"
     "</profiles><contributors><contributor><name>C</name></contributor></contributors>"
     "</project>"),
    ("<project><build><a>1</a><b>2</b></build><site><c>3</c></site></project>",
     "<project><build><d>4</d></build><site><c>3</c><a>1</a><b>2</b></site></project>"),
]


@pytest.mark.parametrize(("old", "new"), CONTRIBUTORS)
def test_new_children_do_not_rename_or_move_their_uniquely_tagged_parents(old: str, new: str
                                                                          ) -> None:
    """The children of ``profiles`` and ``contributors`` change: the parents stay where they
    are, with their names and ids."""
    script = edit_script(old, new)
    assert not any(isinstance(a, (Rename, Move)) and len(a.path) == 1 for a in script), script
    history = DocumentHistory("d")
    try:
        history.advance(0, old)
        before = [history.document.id_of(c) for c in history.document.getroot()]
        history.advance(1, new)
        assert [history.document.id_of(c) for c in history.document.getroot()] == before
    finally:
        history.close()


def test_xmldiff_alone_invents_a_rename_there() -> None:
    """The first case above, without unique tags: a new profiles element, the old one renamed."""
    old, new = CONTRIBUTORS[0]
    script = edit_script(old, new, DiffOptions(unique_tags=False))
    assert any(isinstance(a, Rename) for a in script), script


def test_prematching_never_pairs_an_element_with_a_comment_and_keeps_the_roots() -> None:
    """Comments are left to xmldiff; the roots are matched even when their names differ."""
    differ = DiffOptions().differ()
    assert isinstance(differ, KeyedDiffer)
    left = etree.fromstring("<a><!--x--><b>1</b><c/></a>")
    right = etree.fromstring("<z><b>2</b><!--x--><c/><!--y--></z>")
    matches = differ.match(left, right)
    kinds = {(isinstance(lft.tag, str), isinstance(rgt.tag, str)) for lft, rgt, _ in matches}
    assert kinds <= {(True, True), (False, False)}
    assert (differ.left, differ.right) in [(lft, rgt) for lft, rgt, _ in matches]
    assert edit_script(left, right)  # and the script is exact (checked inside)


def test_a_unique_attribute_that_differs_vetoes_a_namesake() -> None:
    """Two ``x`` with other xml:ids are two nodes, as xmldiff says: no update of one."""
    old = '<p><x xml:id="one">t</x></p>'
    new = '<p><x xml:id="two">t</x></p>'
    history = DocumentHistory("d")
    try:
        history.advance(0, old)
        x0 = history.document.id_of(history.document.getroot()[0])
        history.advance(1, new)
        assert history.document.id_of(history.document.getroot()[0]) != x0
    finally:
        history.close()


# --- the property ----------------------------------------------------------------------------

GROUPS, ARTIFACTS = ["org.a", "org.b", "com.c"], ["x", "y", "z", "w"]
OTHER_TAGS = ["url", "site", "desc", "name"]
BLOCKS = ("deps", "managed")
Model = dict[str, Any]  # {"deps": [(g, a, v)], "managed": [...], "other": [(tag, text)], ...}


def render(m: Model) -> str:
    """A model as a keyed POM-like document (compact or indented)."""
    nl = "\n    " if m["indent"] else ""

    def block(deps: list[tuple[str, str, str]]) -> str:
        return "".join(f"{nl}<dep><g>{g}</g><a>{a}</a><v>{v}</v></dep>" for g, a, v in deps)

    other = "".join(f"{nl}<{t}>{x}</{t}>" for t, x in m["other"])
    return (f"<project><name>{m['name']}</name><deps>{block(m['deps'])}</deps>"
            f"<other>{other}</other><mgmt><deps>{block(m['managed'])}</deps></mgmt>"
            "</project>")


def keys_of(m: Model) -> set[tuple[str, str]]:
    return {(g, a) for b in BLOCKS for g, a, _ in m[b]}


@st.composite
def models(draw: st.DrawFn) -> Model:
    pool = [(g, a) for g in GROUPS for a in ARTIFACTS]
    chosen = draw(st.lists(st.sampled_from(pool), unique=True, max_size=6))
    split = draw(st.integers(0, len(chosen)))
    return {"deps": [(g, a, "1") for g, a in chosen[:split]],
            "managed": [(g, a, "1") for g, a in chosen[split:]],
            "other": draw(st.lists(st.tuples(st.sampled_from(OTHER_TAGS),
                                             st.sampled_from(["1", "u", "v w"])), max_size=3)),
            "name": "n", "indent": draw(st.booleans())}


EDIT_KINDS = ["reorder", "move", "rename", "value", "add", "remove", "reformat"]


def edit_model(data: st.DataObject, m: Model) -> str:
    """One random edit of the model (in place): what it did, for the notes."""
    kind = data.draw(st.sampled_from(EDIT_KINDS))
    block = data.draw(st.sampled_from(BLOCKS))
    deps = m[block]
    if kind == "reorder" and deps:
        m[block] = data.draw(st.permutations(deps))
    elif kind == "move" and deps:
        item = deps.pop(data.draw(st.integers(0, len(deps) - 1)))
        target = m[BLOCKS[1 - BLOCKS.index(block)]]
        target.insert(data.draw(st.integers(0, len(target))), item)
    elif kind == "rename" and m["other"]:
        i = data.draw(st.integers(0, len(m["other"]) - 1))
        m["other"][i] = (data.draw(st.sampled_from(OTHER_TAGS)), m["other"][i][1])
    elif kind == "value":
        if deps:
            i = data.draw(st.integers(0, len(deps) - 1))
            g, a, v = deps[i]
            deps[i] = (g, a, str(int(v) + 1))
        m["name"] += "x"
    elif kind == "add":
        free = [(g, a) for g in GROUPS for a in ARTIFACTS if (g, a) not in keys_of(m)]
        if free:
            g, a = data.draw(st.sampled_from(free))
            deps.insert(data.draw(st.integers(0, len(deps))), (g, a, "1"))
    elif kind == "remove" and deps:
        deps.pop(data.draw(st.integers(0, len(deps) - 1)))
    elif kind == "reformat":
        m["indent"] = not m["indent"]
    return f"{kind} {block}"


@st.composite
def keyed_histories(draw: st.DrawFn) -> list[Model]:
    data = draw(st.data())
    history = [draw(models())]
    for _ in range(draw(st.integers(1, 4))):
        m = json.loads(json.dumps(history[-1]))
        for blk in BLOCKS:
            m[blk] = [tuple(d) for d in m[blk]]
        m["other"] = [tuple(o) for o in m["other"]]
        done = [edit_model(data, m) for _ in range(draw(st.integers(1, 3)))]
        note(f"v{len(history)} after {done}")
        history.append(m)
    return history


def _ids(history: DocumentHistory) -> dict[tuple[str, str], str | None]:
    doc = history.document
    return {(d.findtext("g"), d.findtext("a")): doc.id_of(d)
            for d in doc.getroot().iter("dep")}


@settings(max_examples=examples(60), deadline=None)
@given(keyed_histories(), st.booleans(), st.booleans())
def test_keyed_histories_replay_exactly_and_insert_only_what_they_add(
        models_: list[Model], fast_match: bool, unique_tags: bool) -> None:
    """Every version replays exactly (C14N); a key in two consecutive versions keeps its ids;
    the keys inserted with new ids are the keys the version adds (all of them at version 0)."""
    options = DiffOptions(keys=(Key.parse("dep=g,a"),), fast_match=fast_match,
                          unique_tags=unique_tags)
    history = DocumentHistory("d", options=options)
    previous: dict[tuple[str, str], str | None] = {}
    try:
        for v, m in enumerate(models_):
            xml = render(m)
            note(f"v{v}: {xml}")
            snap = history.document.snapshot()
            r = history.advance(v, xml)
            assert replays_to(snap, r.events, xml)
            now = _ids(history)
            assert {k: now[k] for k in previous if k in now} == {
                k: i for k, i in previous.items() if k in now}
            fresh = set(inserted(r.events, "dep")) - set(previous.values())
            assert {k for k, i in now.items() if i in fresh} == set(now) - set(previous)
            assert r.notes == []
            previous = now
    finally:
        history.close()


# --- the command line and Spark ------------------------------------------------------------


@pytest.mark.parametrize(("key", "message"), [
    ("pom:dependency", "no '=' after the element's name"),
    ("mvn:dependency=mvn:groupId", "prefix 'mvn' is not bound: bind it with -n mvn=URI"),
    ("pom:dependency=pom:groupId,", "column 28: empty field"),
    ("pom:dependency/x=pom:groupId", "column 15"),
])
def test_cli_refuses_a_bad_key_before_spark_starts(
        key: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A key that does not parse or names an unbound prefix: one line, status 1, no
    traceback, and Spark is never started (its progress line never printed)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "h.jsonl").write_text('{"doc": "a", "version": 0, "xml": "<a/>"}\n')
    argv = ["replay", "h.jsonl", "-n", f"pom={NS}", "--key", key, "--out", "o"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "--key" in err, err
    assert "Traceback" not in err and "Spark" not in err
    assert len(err.strip().splitlines()) == 1


def test_cli_refuses_two_keys_for_one_element(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "h.jsonl").write_text('{"doc": "a", "version": 0, "xml": "<a/>"}\n')
    assert main(["replay", "h.jsonl", "--key", "d=g", "--key", "d=a", "--out", "o"]) == 1
    err = capsys.readouterr().err
    assert "a second key for d" in err and "Spark" not in err


def _key_history() -> list[dict[str, Any]]:
    twice = [dep("org.a", "x"), dep("org.b", "y"), dep("org.a", "x", "2.0")]
    versions = [pom(twice), pom(list(reversed(twice)), [dep("org.c", "z")]),
                pom([dep("org.b", "y")], [dep("org.a", "x", "3"), dep("org.c", "z")])]
    return [{"doc": "pom.xml", "version": v, "xml": x, "time": 100 + v}
            for v, x in enumerate(versions)]


@pytest.mark.slow
def test_spark_reports_the_same_key_notes_and_events(spark: Any) -> None:
    """On Spark, keyed options reach the workers: the same events and error rows."""
    pytest.importorskip("pyspark")
    from xmlevents.replay import ERRORS_SCHEMA, EVENTS_SCHEMA, replay_frames

    rows = _key_history()
    local = replay_history(rows, options=keyed())
    frames = replay_frames(spark, spark.createDataFrame(
        [(r["doc"], r["version"], r["xml"], None, r["time"]) for r in rows],
        "doc string, version long, xml string, commit string, time long"), options=keyed())
    try:
        def rows_of(df: Any) -> list[str]:
            return sorted(json.dumps(r.asDict(), sort_keys=True) for r in df.collect())

        def local_of(found: list[dict[str, Any]], names: list[str]) -> list[str]:
            return sorted(json.dumps({n: r.get(n) for n in names}, sort_keys=True)
                          for r in found)

        assert rows_of(frames.events) == local_of(local.events, EVENTS_SCHEMA.fieldNames())
        assert rows_of(frames.errors) == local_of(local.errors, ERRORS_SCHEMA.fieldNames())
        assert sorted((e["version"], e["stage"]) for e in local.errors) == [
            (0, "key"), (1, "key")]
    finally:
        frames.unpersist()


@pytest.mark.slow
def test_cli_replay_with_a_key(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               spark: Any) -> None:
    """``--key`` with ``-n``: the run succeeds and the repeated key values are its errors."""
    from xmlevents.replay import write_versions

    write_versions(_key_history(), tmp_path / "h.jsonl")
    out = tmp_path / "out"
    status = main(["replay", str(tmp_path / "h.jsonl"), "-n", f"pom={NS}", "--key", DEP_KEY,
                   "--key", "pom:plugin=pom:artifactId", "--no-unique-tags", "--out", str(out),
                   "--quiet"])
    captured = capsys.readouterr()
    printed = captured.out
    assert status == 0, printed
    assert "versions          3 replayed, 2 errors" in printed
    assert "pom.xml version 1: key dependency=groupId,artifactId" in printed
    # a key naming no element of any version: a warning, the run goes on
    assert "warning: key plugin=artifactId selected nothing" in captured.err
    assert "dependency=groupId,artifactId selected nothing" not in captured.err


def test_a_key_that_selects_nothing_is_a_warning_with_the_count() -> None:
    """A key naming an element no version has: replayed all the same, with a KeyWarning."""
    rows = [{"doc": "d", "version": 0, "xml": "<a><b/></a>"}]
    options = DiffOptions(keys=(Key.parse("dep=g"),))
    with pytest.warns(KeyWarning, match=r"key dep=g selected nothing: .* \(0 elements\)"):
        result = replay_history(rows, options=options)
    assert result.versions == 1 and result.errors == []


def _profiles(profiles: list[tuple[str, list[str]]]) -> str:
    """A POM whose profiles (a tag that repeats: no unique tag decides them) hold
    dependencies."""
    body = "".join(
        f"\n    <profile>\n      <id>{pid}</id>\n      <activation><jdk>{pid}</jdk>"
        f"</activation>\n      <dependencies>{''.join(deps)}\n      </dependencies>\n"
        "    </profile>" for pid, deps in profiles)
    return (f'<project xmlns="{NS}">\n  <version>1</version>\n  <profiles>{body}\n'
            "  </profiles>\n</project>")


def test_ancestors_are_paired_by_what_their_keyed_dependencies_say() -> None:
    """A profile inserted before two others (the commons-csv case): with the dependency key
    alone, each old profile is paired with the new one its dependencies are in, so no
    dependency moves and only the new profile's are inserted."""
    a = [dep("org.a", "x", indent="\n        "), dep("org.a", "y", indent="\n        ")]
    b = [dep("org.b", "z", indent="\n        ")]
    new = [dep("org.n", "q", indent="\n        ")]
    v0 = _profiles([("p1", a), ("p2", b)])
    v1 = _profiles([("p0", new), ("p1", a), ("p2", b)])
    (ids0, _, ok0), (ids1, events, ok1) = run([v0, v1])
    assert ok0 and ok1
    assert {k: ids1[k] for k in ids0} == ids0
    # the new dependency is the only one inserted, and nothing is moved
    assert inserted(events) == [ids1[("org.n", "q")]]
    assert not any(e.moved for e in events)
