"""Bad input: documents that break mid-stream, entity bombs and external entities, huge text
nodes, malformed event streams, and queries outside the subset (refused before any input)."""

from __future__ import annotations

import io
import random

import pytest

from xmlevents.stream import (
    DocumentError,
    Query,
    QuerySyntaxError,
    UnsupportedQueryError,
    matches,
    parse_grammar,
)
from xmlevents.stream._prolog import Prolog
from xmlevents.stream._source import CHUNK


def test_malformed_mid_stream_gives_the_matches_decided_before_then_the_error() -> None:
    """Every match decided before the error comes first, then line and column."""
    doc = b"<r>\n<a><b/><c/></a>\n<a><b/><c/>\n<x></a></r>"
    it = matches("//a/b", doc)
    assert [m.node for m in (next(it), next(it))] == [3, 6]
    with pytest.raises(DocumentError) as info:
        next(it)
    assert info.value.line == 4 and info.value.column is not None
    assert "not well-formed" in str(info.value)


def test_truncated_document_is_an_error_after_its_matches() -> None:
    """A document cut short: the matches so far, then an error (end of data)."""
    found = []
    with pytest.raises(DocumentError):
        for m in matches("//b", b"<r><b/><a><b/>"):
            found.append(m.node)
    assert found == [2, 4]


def test_matches_in_a_chunk_before_the_error_are_reported() -> None:
    """The error and the matches before it may be in the same chunk of input."""
    found = []
    with pytest.raises(DocumentError):
        for m in matches("//b", io.BytesIO(b"<r><b/><b/></c></r>")):
            found.append(m.node)
    assert found == [2, 3]


BOMB = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<lolz a="&lol3;"><b>&lol3;</b></lolz>"""


def test_entity_bomb_is_refused() -> None:
    """A DTD declaring entities is refused before the root element is read."""
    with pytest.raises(DocumentError, match="declares entities"):
        list(matches("//b", BOMB))


def test_external_entity_is_refused() -> None:
    """An external entity (XXE) is refused; nothing is read from the file system."""
    doc = b'<!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]><r><b>&e;</b></r>'
    with pytest.raises(DocumentError, match="declares entities"):
        list(matches("//b", doc))


def test_entity_declared_in_a_late_chunk_is_refused() -> None:
    """The DTD check does not depend on where the chunks of the input fall."""
    doc = b"<?xml version='1.0'?>" + b" " * 70_000 + \
        b'<!DOCTYPE r [<!ENTITY e "x">]><r><b>&e;</b></r>'
    with pytest.raises(DocumentError, match="declares entities"):
        list(matches("//b", doc))


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-16-le"])
def test_entity_declared_in_a_utf16_document_is_refused(encoding: str) -> None:
    """The bytes before the root are searched in the encodings libxml2 detects by itself."""
    head = f'<?xml version="1.0" encoding="{encoding.upper()}"?>'
    doc = (head + '<!DOCTYPE r [<!ENTITY e "x">]><r><b>&e;</b></r>').encode(encoding)
    with pytest.raises(DocumentError, match="declares entities"):
        list(matches("//b", doc))
    ok = (head + "<r><b/></r>").encode(encoding)
    assert [m.node for m in matches("//b", ok)] == [2]


@pytest.mark.parametrize("encoding", ["utf-32", "utf-32-le", "utf-32-be", "cp037"])
def test_entity_declarations_are_read_in_every_detected_encoding(encoding: str) -> None:
    """UTF-32 either way round and EBCDIC: the prolog reader decodes as libxml2 detects, and
    finds the declaration with its line and column."""
    head = '<?xml version="1.0" encoding="%s"?>\n' % ("EBCDIC-US" if encoding == "cp037"
                                                      else encoding.upper())
    doc = (head + '<!DOCTYPE r [<!-- <!ENTITY no> --> <!ENTITY e "x">]><r/>').encode(encoding)
    with pytest.raises(DocumentError, match="declares entities") as info:
        Prolog().feed(doc, final=True)
    assert (info.value.line, info.value.column) == (2, 36)


# issue 33, item 3: "<!ENTITY" that is no declaration, and declarations wherever chunks fall
NOT_DECLARATIONS = [
    b"<r><![CDATA[<!ENTITY e 'x'>]]><b/></r>",
    b"<r><!-- <!ENTITY e 'x'> --><b/></r>",
    b"<!-- <!DOCTYPE r [<!ENTITY e 'x'>]> --><r><b/></r>",  # a commented-out DOCTYPE
    b"<?pi <!ENTITY e 'x'>?><r><b/></r>",
    b'<!DOCTYPE r [<!-- <!ENTITY e "x"> --><?pi <!ENTITY?>'
    b'<!NOTATION n SYSTEM "<!ENTITY e \'x\'>]>">]><r><b/></r>',
    b'<!DOCTYPE r SYSTEM "x[<!ENTITY e"><r><b/></r>',
]


@pytest.mark.parametrize("doc", NOT_DECLARATIONS)
def test_entity_text_that_is_no_declaration_is_accepted(doc: bytes) -> None:
    """``<!ENTITY`` in a CDATA section, a comment (a commented-out DOCTYPE too), a PI, a
    literal or a system identifier is text, not a declaration: the document is read."""
    assert [m.node for m in matches("//b", doc)] == [2]


@pytest.mark.parametrize("doc", NOT_DECLARATIONS)
@pytest.mark.parametrize("shift", [-9, -5, -1, 0, 3])
def test_entity_text_across_a_chunk_boundary_is_accepted(doc: bytes, shift: int) -> None:
    """The same documents with ``<!ENTITY`` placed across the 64 KiB boundary of the reader
    (a comment before the root fills the first chunk): still read, as anywhere else."""
    at = doc.index(b"<!ENTITY")
    pad = CHUNK - at + shift
    padded = b"<!--" + b"p" * (pad - 7) + b"-->" + doc
    assert padded.index(b"<!ENTITY") == CHUNK + shift
    assert [m.node for m in matches("//b", padded)] == [2]
    assert [m.node for m in matches("//b", io.BytesIO(padded))] == [2]


@pytest.mark.parametrize("shift", [-9, -8, -5, -1, 0, 2])
def test_declaration_across_a_chunk_boundary_is_refused_with_its_position(shift: int) -> None:
    """A declaration cut in two by the reader's chunks, after a comment and a PI holding
    ``<!ENTITY`` too, is found: refused, with its line and column, before any match."""
    body = b'<!DOCTYPE r [\n  <!-- <!ENTITY no> -->\n  <!ENTITY e "x">]><r><b>&e;</b></r>'
    at = body.index(b'<!ENTITY e')
    pad = CHUNK - at + shift
    doc = b"<!--" + b"p" * (pad - 8) + b"-->\n" + body
    assert doc.index(b'<!ENTITY e') == CHUNK + shift
    with pytest.raises(DocumentError, match="declares entities") as info:
        list(matches("//b", doc))
    assert (info.value.line, info.value.column) == (4, 3)


def test_prolog_reader_is_independent_of_where_chunks_fall() -> None:
    """Every split of each document into pieces gives the verdict of the whole document:
    refused (with the same line and column) or not."""
    docs = [*NOT_DECLARATIONS, b'<!DOCTYPE r [\n<!-- - -->\r\n <!ENTITY e "x">]><r/>',
            b'<!DOCTYPE r [<!ELEMENT r ANY><!ENTITY % p "x">]><r/>', BOMB]
    rng = random.Random(33)

    def verdict(pieces: list[bytes]) -> tuple[int | None, int | None] | None:
        p = Prolog()
        try:
            for k, piece in enumerate(pieces):
                p.feed(piece, final=k == len(pieces) - 1)
        except DocumentError as refused:
            return refused.line, refused.column
        return None

    for doc in docs:
        whole = verdict([doc])
        assert (whole is None) == (b"<!ENTITY" not in doc or doc in NOT_DECLARATIONS), doc
        for _ in range(60):
            cuts = sorted(rng.sample(range(1, len(doc)), min(len(doc) - 1, rng.randint(1, 6))))
            pieces = [doc[a:b] for a, b in zip([0, *cuts], [*cuts, len(doc)], strict=True)]
            assert verdict(pieces) == whole, (doc, cuts)
        assert verdict([doc[i:i + 1] for i in range(len(doc))]) == whole


def test_doctype_without_entities_is_accepted() -> None:
    """A DOCTYPE without entity declarations is harmless; no external DTD is loaded."""
    doc = b'<!DOCTYPE r SYSTEM "missing-r.dtd"><r><b/></r>'
    assert [m.node for m in matches("//b", doc)] == [2]


def test_dtd_by_url_is_not_fetched() -> None:
    """A DTD named by URL is not fetched (no DTD loading, the network off): a server that
    would answer is never asked, and the document is read."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    asked: list[bool] = []

    def accept() -> None:
        try:
            conn, _ = server.accept()
            asked.append(True)
            conn.close()
        except OSError:
            pass

    t = threading.Thread(target=accept)
    t.start()
    port = server.getsockname()[1]
    doc = b'<!DOCTYPE r SYSTEM "http://127.0.0.1:%d/r.dtd"><r><b/></r>' % port
    assert [m.node for m in matches("//b", doc)] == [2]
    t.join()
    server.close()
    assert asked == []


_HUGE_TEXT = r'''
import json, resource, sys
from xmlevents.stream import Query

class Doc:
    """<r><b/><t>, then sys.argv[1] MB of text in one text node, then </t><b/></r>."""
    def __init__(self, mb):
        self.parts = [b"<r><b/><t>"] + [b"x" * (1 << 16)] * (mb * 16) + [b"</t><b/></r>"]
        self.i = 0
    def read(self, n=-1):
        if self.i >= len(self.parts):
            return b""
        self.i += 1
        return self.parts[self.i - 1]

list(Query("//b").evaluate(Doc(1)))
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
found = [m.node for m in Query("//b").evaluate(Doc(int(sys.argv[1])))]
print(json.dumps({"found": found, "base_kb": base,
                  "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
'''


def test_huge_text_node_is_streamed_not_buffered() -> None:
    """A text node far over libxml2's 10 MB limit for tree building (64 MB) is read: text
    never reaches the run (the parser target has no ``data``), libxml2's push parser reads it
    piece by piece, and the process's peak memory does not grow by more than a few MB."""
    import json
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", _HUGE_TEXT, "64"], capture_output=True,
                         text=True, check=True)
    result = json.loads(out.stdout)
    assert result["found"] == [2, 4]
    assert result["peak_kb"] - result["base_kb"] < 8 * 1024, result


def test_large_text_below_the_limit_is_read() -> None:
    """Text below the limit is read and freed with its element."""
    doc = b"<r><t>" + b"y" * 2_000_000 + b"</t>" + b"<b/>" * 3 + b"</r>"
    assert [m.node for m in matches("//b", doc)] == [3, 4, 5]


def test_second_root_in_events_is_refused() -> None:
    """An event stream with two roots is not a document."""
    evs = [("start", "r"), ("end",), ("start", "r"), ("end",)]
    with pytest.raises(DocumentError, match="second root"):
        list(matches("//r", evs))


@pytest.mark.parametrize("evs, reason", [
    ([("end",)], "no open element"),
    ([("start", "r"), ("end", "x")], "while 'r' is open"),
    ([("start", "r")], "end inside element 'r'"),
    ([("begin", "r")], "unknown event"),
    ([], "no element"),
])
def test_malformed_event_streams(evs: list[tuple[str, ...]], reason: str) -> None:
    """Event streams that do not nest are errors naming the event."""
    with pytest.raises(DocumentError, match=reason):
        list(matches("//r", evs))


class _Untouchable(io.RawIOBase):
    def read(self, size: int = -1) -> bytes:  # pragma: no cover - must not be called
        raise AssertionError("the input was read")


@pytest.mark.parametrize("query, col, reason", [
    ("//a[@id]", 5, "attributes are not supported"),
    ("//a[text()]", 5, "text() is not supported"),
    ("//a[2]", 5, "position [2] is not supported"),
    ("//a[count(b)]", 5, "function count() is not supported"),
    ("//a | //b", 5, "unions"),
    ("//a[b='x']", 6, "arithmetic and comparisons"),
    ("following::a", 1, "following axis is not supported"),
    ("//a/descendant::b[1]", 19, "on the descendant axis is not supported"),
    ("//node()", 3, "node() is not supported"),
    ("/", 1, "the document node"),
])
def test_query_outside_the_subset_is_refused_with_column_before_reading(
        query: str, col: int, reason: str) -> None:
    """An unsupported query names its column and reason, and the input is never read."""
    with pytest.raises(UnsupportedQueryError) as info:
        matches(query, _Untouchable())
    assert info.value.column == col
    assert reason in str(info.value)


@pytest.mark.parametrize("query, col", [("//a[", 5), ("//a]", 4), ("a/", 3), ("", 1),
                                        ("//a[not(b]", 10), ("x:a", 1)])
def test_query_syntax_errors_name_the_column(query: str, col: int) -> None:
    """Malformed queries are syntax errors with a column (unbound prefixes included)."""
    with pytest.raises((QuerySyntaxError, UnsupportedQueryError)) as info:
        Query(query)
    assert info.value.column == col


@pytest.mark.parametrize("text, reason", [
    ("x -> a<y, x>; select x", "variable 'y' has no production"),
    ("x -> a<x x>; select x", "expected ','"),
    ("x -> a<x, x> | λ", "no distinguished variable"),
    ("x => λ", "unexpected '='"),
])
def test_grammar_notation_errors(text: str, reason: str) -> None:
    """Grammar text that does not follow the notation is refused with line and column."""
    with pytest.raises(QuerySyntaxError, match=reason):
        parse_grammar(text)


def test_too_many_conditions_looked_back_at_are_refused() -> None:
    """More than MAX_DECIDED past conditions: refused with the reason, input not read."""
    from xmlevents.stream._compile import MAX_DECIDED
    q = "//z" + "".join(f"[parent::a{i}[b{i}]]" for i in range(MAX_DECIDED + 1))
    with pytest.raises(UnsupportedQueryError, match="conditions that later nodes look back"):
        matches(q, _Untouchable())
    ok = "//z" + "".join(f"[parent::a{i}[b{i}]]" for i in range(MAX_DECIDED - 1))
    assert list(matches(ok, b"<r><z/></r>")) == []


def test_xml_text_passed_as_a_path_is_explained() -> None:
    """A str is a path; XML text given as str gets a message saying to pass bytes."""
    with pytest.raises(DocumentError, match="pass the document as bytes"):
        matches("//b", "<r><b/></r>")


def test_nesting_deeper_than_libxml2_allows_without_huge_tree_is_refused() -> None:
    """huge_tree stays off: 256 levels are read, deeper documents are refused (line, column);
    events have no such limit."""
    ok = b"<a>" * 200 + b"<b/>" + b"</a>" * 200
    assert [m.node for m in matches("//a/b", ok)] == [201]
    deep = b"<a>" * 300 + b"<b/>" + b"</a>" * 300
    with pytest.raises(DocumentError, match="depth") as info:
        list(matches("//a/b", deep))
    assert info.value.line == 1 and info.value.column
    evs = [("start", "a")] * 300 + [("start", "b"), ("end",)] + [("end",)] * 300
    assert [m.node for m in matches("//a/b", evs)] == [301]


def test_nesting_too_deep_in_a_stream_is_refused_after_its_matches() -> None:
    """From a stream (not read again to find the place) the error says the depth, without a
    position; the matches decided before it come first."""
    deep = b"<r><a><b/></a>" + b"<a>" * 300 + b"</a>" * 300 + b"</r>"
    found = []
    with pytest.raises(DocumentError, match="depth") as info:
        for m in matches("//a/b", io.BytesIO(deep)):
            found.append(m.node)
    assert found == [3]
    assert "257" in str(info.value)


def test_a_source_of_another_type_is_a_type_error() -> None:
    """A source that is no path, bytes, file or iterable is refused at once (TypeError)."""
    with pytest.raises(TypeError, match="found int"):
        matches("//b", 42)
