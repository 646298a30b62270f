"""git_history: every committed version of one file, as version-table rows (issue 6)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from xmlevents.algebra import XmlEventsError
from xmlevents.replay import GitHistoryError, git_history
from xmlevents.replay._git import decode_xml_bytes

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

T0 = 1_700_000_000  # commit times are T0, T0 + 100, ... so they can be checked exactly

V1 = "<app><name>café</name></app>\n"
V2 = "<app><name>café</name><port>80</port></app>\n"
LATIN1_TEXT = '<?xml version="1.0" encoding="ISO-8859-1"?>\n<app name="caf\u00e9"/>\n'
BOM_TEXT = "<app>\r\n  <name>naïve</name>\r\n</app>\r\n"
LAST = "<app><port>8080</port></app>\n"


def _env(when: int | None = None) -> dict[str, str]:
    env = dict(os.environ)
    # Isolate from the machine's git configuration (signing, hooks, autocrlf) and identity.
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME="Tester", GIT_AUTHOR_EMAIL="tester@example.com",
               GIT_COMMITTER_NAME="Tester", GIT_COMMITTER_EMAIL="tester@example.com")
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(var, None)
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{when} +0000"
    return env


def git(repo: Path, *args: str, when: int | None = None, stdin: bytes | None = None) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], env=_env(when), input=stdin,
                          capture_output=True, check=True)
    return done.stdout.decode()


class Repo:
    """A scratch repository whose commits get times T0, T0 + 100, ... in order."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.commits = 0
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "-q")

    def write(self, path: str, data: str | bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)

    def commit(self, message: str) -> tuple[str, int]:
        when = T0 + 100 * self.commits
        self.commits += 1
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", message, when=when)
        return git(self.root, "rev-parse", "HEAD").strip(), when


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[str, int, str]]]:
    """A repository editing conf/app.xml, with the (sha, time, text) each version must have."""
    repo = Repo(tmp_path_factory.mktemp("history") / "repo")
    expected: list[tuple[str, int, str]] = []

    repo.write("conf/app.xml", V1)
    expected.append((*repo.commit("add app.xml"), V1))
    repo.write("README.md", "readme\n")
    repo.commit("other file only")
    repo.write("conf/app.xml", V2)
    expected.append((*repo.commit("edit app.xml"), V2))
    repo.write("conf/other.xml", "<other/>\n")
    repo.write("app.xml", "<decoy/>\n")
    repo.commit("other XML files only")
    (repo.root / "conf/app.xml").unlink()
    repo.commit("delete app.xml")
    repo.write("README.md", "readme 2\n")
    repo.commit("other file while deleted")
    repo.write("conf/app.xml", V2)  # re-created with the content it had before the deletion
    expected.append((*repo.commit("re-create app.xml"), V2))
    repo.write("conf/app.xml", LATIN1_TEXT.encode("iso-8859-1"))
    expected.append((*repo.commit("latin-1"), LATIN1_TEXT))
    repo.write("conf/app.xml", b"\xef\xbb\xbf" + BOM_TEXT.encode("utf-8"))
    expected.append((*repo.commit("utf-8 with a BOM and CRLF"), BOM_TEXT))
    repo.write("conf/app.xml", LAST)
    repo.write("README.md", "readme 3\n")
    expected.append((*repo.commit("app.xml and another file"), LAST))
    repo.write("README.md", "readme 4\n")
    repo.commit("other file last")
    return repo.root, expected


def test_one_row_per_committed_version(history: tuple[Path, list[tuple[str, int, str]]]) -> None:
    """Every commit that has the file is one row, oldest first, with its sha, time and text."""
    root, expected = history
    rows = list(git_history(root, "conf/app.xml"))
    assert rows == [{"doc": "conf/app.xml", "version": v, "commit": sha, "time": when, "xml": xml}
                    for v, (sha, when, xml) in enumerate(expected)]


def test_row_fields(history: tuple[Path, list[tuple[str, int, str]]]) -> None:
    """Rows carry the given doc, versions from 0, full shas and the committer times."""
    root, _expected = history
    rows = list(git_history(str(root), "conf/app.xml", doc="app-config"))
    assert [r["version"] for r in rows] == list(range(6))
    assert {r["doc"] for r in rows} == {"app-config"}
    assert all(isinstance(r["time"], int) and len(r["commit"]) == 40 for r in rows)
    # The shas are the commits' full names, as git rev-parse gives them.
    assert rows[0]["commit"] == git(root, "rev-list", "--max-parents=0", "HEAD").strip()
    assert rows[-1]["commit"] == git(root, "rev-parse", "HEAD~1").strip()
    assert [r["time"] for r in rows] == [T0, T0 + 200, T0 + 600, T0 + 700, T0 + 800, T0 + 900]


def test_deletion_is_skipped_and_recreation_is_a_version(
        history: tuple[Path, list[tuple[str, int, str]]]) -> None:
    """A deleting commit is no version; re-creating the file with old bytes is a new one."""
    root, _ = history
    rows = list(git_history(root, "conf/app.xml"))
    deleted = git(root, "log", "--format=%H", "--diff-filter=D", "--", "conf/app.xml").split()
    assert len(deleted) == 1 and deleted[0] not in {r["commit"] for r in rows}
    # Same bytes as the version before the deletion, still a version of its own.
    assert rows[1]["xml"] == rows[2]["xml"] == V2
    assert rows[1]["commit"] != rows[2]["commit"]


def test_encodings(history: tuple[Path, list[tuple[str, int, str]]]) -> None:
    """Versions are decoded as their declaration or byte order mark says; line ends are kept."""
    root, _ = history
    rows = list(git_history(root, "conf/app.xml"))
    assert rows[0]["xml"] == V1  # UTF-8 without a declaration
    assert rows[3]["xml"] == LATIN1_TEXT  # declaration kept, bytes decoded as ISO-8859-1
    assert rows[4]["xml"] == BOM_TEXT and not rows[4]["xml"].startswith("\ufeff")
    assert "\r\n" in rows[4]["xml"]  # line ends are the file's own


def test_path_forms_and_repo_subdirectory(history: tuple[Path, list[tuple[str, int, str]]]) -> None:
    """The path is normalised and taken from the root, even when repo is a subdirectory."""
    root, expected = history
    shas = [sha for sha, _, _ in expected]
    assert [r["commit"] for r in git_history(root, "./conf//app.xml")] == shas
    # path is relative to the repository root even when repo is a subdirectory of it.
    assert [r["commit"] for r in git_history(root / "conf", "conf/app.xml")] == shas
    assert [r["xml"] for r in git_history(root, "app.xml")] == ["<decoy/>\n"]


def test_bare_clone(history: tuple[Path, list[tuple[str, int, str]]], tmp_path: Path) -> None:
    """A bare repository gives the same rows."""
    root, expected = history
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(root), str(bare)], env=_env(),
                   check=True, capture_output=True)
    rows = list(git_history(bare, "conf/app.xml"))
    assert [(r["commit"], r["time"], r["xml"]) for r in rows] == expected


def test_names_are_literal(tmp_path: Path) -> None:
    """A file name with glob characters names that file only."""
    repo = Repo(tmp_path / "repo")
    repo.write("data/my file[1].xml", "<a/>")
    repo.write("data/my file1.xml", "<glob-match/>")  # what [1] would match as a glob
    sha, _ = repo.commit("both")
    repo.write("data/my file1.xml", "<glob-match2/>")
    repo.commit("only the other")
    rows = list(git_history(repo.root, "data/my file[1].xml"))
    assert [(r["commit"], r["xml"]) for r in rows] == [(sha, "<a/>")]


def test_stopping_early(history: tuple[Path, list[tuple[str, int, str]]]) -> None:
    """Closing the iterator early ends it (and its cat-file process) cleanly."""
    root, expected = history
    rows = git_history(root, "conf/app.xml")
    assert next(rows)["commit"] == expected[0][0]
    rows.close()  # type: ignore[attr-defined]  # ends the cat-file process


def test_many_commits(tmp_path: Path) -> None:
    # Written with fast-import so the test stays quick (each commit continues the branch);
    # read back through one cat-file process.
    """Hundreds of versions come out in order through one cat-file process."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    n = 300
    stream = bytearray()
    for i in range(n):
        body = f"<counter>{i}</counter>\n".encode()
        stream += (f"commit refs/heads/main\n"
                   f"committer Tester <tester@example.com> {T0 + i} +0000\n"
                   f"data 2\nc\n").encode()
        stream += f"M 100644 inline doc.xml\ndata {len(body)}\n".encode() + body + b"\n"
    git(root, "fast-import", "--quiet", stdin=bytes(stream))
    git(root, "symbolic-ref", "HEAD", "refs/heads/main")
    rows = list(git_history(root, "doc.xml"))
    assert len(rows) == n
    assert rows[-1] == {"doc": "doc.xml", "version": n - 1,
                        "commit": git(root, "rev-parse", "main").strip(),
                        "time": T0 + n - 1, "xml": f"<counter>{n - 1}</counter>\n"}
    assert [r["xml"] for r in rows[:2]] == ["<counter>0</counter>\n", "<counter>1</counter>\n"]


# --- errors ---------------------------------------------------------------------------------


def _error(repo: Path, path: str, **kwargs: Any) -> str:
    with pytest.raises(GitHistoryError) as caught:
        list(git_history(repo, path, **kwargs))
    assert isinstance(caught.value, XmlEventsError) and isinstance(caught.value, ValueError)
    return str(caught.value)


def test_not_a_repository(tmp_path: Path) -> None:
    """A folder that is not a repository is a GitHistoryError naming it and the path."""
    plain = tmp_path / "plain"
    plain.mkdir()
    message = _error(plain, "conf/app.xml")
    assert "not a git repository" in message
    assert str(plain) in message and "conf/app.xml" in message
    assert "not a git repository" in _error(tmp_path / "absent", "conf/app.xml")


def test_errors_are_raised_before_iterating(tmp_path: Path) -> None:
    """A bad repository raises at the call, before any row is asked for."""
    with pytest.raises(GitHistoryError):
        git_history(tmp_path, "conf/app.xml")


def test_unknown_path(history: tuple[Path, list[tuple[str, int, str]]]) -> None:
    """A path never committed is a GitHistoryError naming it and the repository."""
    root, _ = history
    message = _error(root, "conf/missing.xml")
    assert "never committed" in message and "conf/missing.xml" in message
    assert str(root) in message


def test_empty_repository(tmp_path: Path) -> None:
    """A repository without commits is a GitHistoryError: never committed."""
    Repo(tmp_path / "empty")
    assert "never committed" in _error(tmp_path / "empty", "conf/app.xml")


def test_directory_is_not_a_file(history: tuple[Path, list[tuple[str, int, str]]]) -> None:
    """A path that names a directory is a GitHistoryError: not a file."""
    root, _ = history
    assert "not a file" in _error(root, "conf")


@pytest.mark.parametrize("path", ["", ".", "..", "../conf/app.xml", "/conf/app.xml", "a\nb"])
def test_bad_paths(history: tuple[Path, list[tuple[str, int, str]]], path: str) -> None:
    """Empty, absolute, escaping or multi-line paths are refused."""
    root, _ = history
    _error(root, path)


def test_undecodable_version(tmp_path: Path) -> None:
    """An undecodable version is an error naming commit and offset; earlier ones come out."""
    repo = Repo(tmp_path / "repo")
    repo.write("doc.xml", "<a>ok</a>")
    good, _ = repo.commit("good")
    repo.write("doc.xml", b"<a>ok\xff</a>")
    bad, _ = repo.commit("bad")
    rows = git_history(repo.root, "doc.xml")
    assert next(rows)["commit"] == good  # versions before the bad one still come out
    with pytest.raises(GitHistoryError) as caught:
        next(rows)
    message = str(caught.value)
    assert bad in message and "doc.xml" in message and "byte offset 5" in message


def test_undecodable_after_bom_counts_the_bom(tmp_path: Path) -> None:
    """The offset of a bad byte counts the byte order mark."""
    repo = Repo(tmp_path / "repo")
    repo.write("doc.xml", b"\xef\xbb\xbf<a>\xc3</a>")
    repo.commit("bad")
    assert "byte offset 6" in _error(repo.root, "doc.xml")


def test_unknown_declared_encoding(tmp_path: Path) -> None:
    """An encoding the declaration names but Python lacks is an error naming it and the commit."""
    repo = Repo(tmp_path / "repo")
    repo.write("doc.xml", b'<?xml version="1.0" encoding="no-such-codec"?><a/>')
    sha, _ = repo.commit("bad")
    message = _error(repo.root, "doc.xml")
    assert "no-such-codec" in message and sha in message


def test_git_missing(history: tuple[Path, list[tuple[str, int, str]]], tmp_path: Path,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Without git on PATH the error says git is not installed."""
    root, _ = history
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no git on it
    assert "git is not installed" in _error(root, "conf/app.xml")


def test_decode_xml_bytes() -> None:
    """Bytes decode by BOM, else declaration, else UTF-8 (also under a wrong UTF-16 label)."""
    assert decode_xml_bytes("<a>é</a>".encode(), "x") == "<a>é</a>"
    assert decode_xml_bytes(b"<?xml version='1.0' encoding='cp1252'?><a>\x80</a>", "x") == (
        "<?xml version='1.0' encoding='cp1252'?><a>\u20ac</a>")
    assert decode_xml_bytes("\ufeff<a>é</a>".encode("utf-16-le"), "x") == "<a>é</a>"
    # A UTF-16 label on bytes whose declaration reads as ASCII is wrong: they are UTF-8.
    assert decode_xml_bytes('<?xml version="1.0" encoding="UTF-16"?><a>é</a>'.encode(), "x") == (
        '<?xml version="1.0" encoding="UTF-16"?><a>é</a>')
    with pytest.raises(GitHistoryError, match=r"^f\.xml: not valid utf-8 at byte offset 1 "):
        decode_xml_bytes(b"<\xff", "f.xml")


def test_git_that_cannot_run_is_a_git_history_error(
        history: tuple[Path, list[tuple[str, int, str]]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A git found on PATH that cannot be executed is a GitHistoryError, not an OSError."""
    root, _ = history
    fake = tmp_path / "git"
    fake.write_text("not a program")  # not executable
    monkeypatch.setattr(shutil, "which", lambda name: str(fake))
    assert "cannot run git" in _error(root, "conf/app.xml")


# --- the first version decides whether the file is XML (issue 15) ---------------------------


def test_first_version_that_is_not_xml_is_refused_at_the_call(tmp_path: Path) -> None:
    """A file whose first version is not well-formed is refused before any row is asked for,
    naming the path, the commit (abbreviated as git abbreviates it) and the line and column."""
    repo = Repo(tmp_path / "repo")
    repo.write("notes.txt", "just some notes\n")
    sha, _ = repo.commit("text")
    repo.write("notes.txt", "<a/>")
    repo.commit("xml later")
    short = git(repo.root, "rev-parse", "--short", sha).strip()
    with pytest.raises(GitHistoryError) as caught:
        git_history(repo.root, "notes.txt")
    message = str(caught.value)
    assert message == (f"'notes.txt' in {str(repo.root)!r}: the first version (commit {short}) "
                       "is not XML: line 1, column 1: Start tag expected, '<' not found; a "
                       "version table holds XML documents")
    assert "\n" not in message and sha not in message


def test_first_version_truncated_names_its_position(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("doc.xml", "<a>\n  <b>text\n</a>\n")
    repo.commit("bad")
    message = _error(repo.root, "doc.xml")
    assert "the first version (commit " in message and "is not XML: line 3, column" in message


def test_later_versions_that_are_not_xml_stay_rows(tmp_path: Path) -> None:
    """Only the first version decides: a later one that is not well-formed is a row (the
    replay reports it as an error row), and so are the ones after it."""
    repo = Repo(tmp_path / "repo")
    texts = ["<a/>", "<a><b></a>", "not xml at all", "<a><b/></a>"]
    for i, text in enumerate(texts):
        repo.write("doc.xml", text)
        repo.commit(f"v{i}")
    assert [r["xml"] for r in git_history(repo.root, "doc.xml")] == texts


def test_first_version_after_deletions_and_other_files(tmp_path: Path) -> None:
    """The first version is the first commit that has the file, whatever came before it."""
    repo = Repo(tmp_path / "repo")
    repo.write("other.txt", "not xml")
    repo.commit("other")
    repo.write("doc.xml", "<a/>")
    repo.commit("xml")
    assert [r["xml"] for r in git_history(repo.root, "doc.xml")] == ["<a/>"]


# --- history from-git on the command line ----------------------------------------------------


def _cli(*argv: str) -> tuple[int, str, str]:
    import io

    from xmlevents._cli import main

    out, err = io.StringIO(), io.StringIO()
    status = main(["history", "from-git", *argv], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _one_error(err: str) -> str:
    assert err.startswith("xmlevents: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err[len("xmlevents: error: "):-1]


@pytest.mark.parametrize("name", ["h.parquet", "h.txt", "h", "h.gz", "h.jsonl.bz2",
                                  "h.xml.gz"])
def test_from_git_refuses_an_output_it_cannot_write(tmp_path: Path, name: str) -> None:
    """An output name that is not JSON lines is refused before git runs (the repository need
    not even exist) and before anything is written."""
    out = tmp_path / name
    status, stdout, err = _cli(str(tmp_path / "no-repo"), "doc.xml", "-o", str(out))
    assert (status, stdout) == (1, "")
    assert _one_error(err) == (
        f"{out}: cannot write a version table under this name: it is written as JSON lines, "
        "so the name must end in .jsonl, .json or .ndjson (then .gz to compress it)")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["h.jsonl", "h.JSON", "h.ndjson.gz", "h.jsonl.gz"])
def test_from_git_writes_json_lines(history: tuple[Path, list[tuple[str, int, str]]],
                                    tmp_path: Path, name: str) -> None:
    import gzip
    import json

    root, expected = history
    out = tmp_path / name
    status, stdout, err = _cli(str(root), "conf/app.xml", "-o", str(out), "--doc", "app")
    assert (status, err) == (0, "")
    assert stdout == f"{len(expected)} versions of conf/app.xml written to {out}\n"
    data = out.read_bytes()
    text = (gzip.decompress(data) if name.endswith(".gz") else data).decode("utf-8")
    rows = [json.loads(x) for x in text.splitlines()]
    assert [(r["doc"], r["version"], r["commit"], r["xml"]) for r in rows] == [
        ("app", v, sha, xml) for v, (sha, _, xml) in enumerate(expected)]
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no temporary file left


def test_from_git_refuses_a_first_version_that_is_not_xml(tmp_path: Path) -> None:
    """One line naming the commit and the parser's position; the output is not created."""
    repo = Repo(tmp_path / "repo")
    repo.write("conf.json", '{"port": 80}\n')
    sha, _ = repo.commit("json")
    out = tmp_path / "h.jsonl"
    status, stdout, err = _cli(str(repo.root), "conf.json", "-o", str(out))
    assert (status, stdout) == (1, "")
    short = git(repo.root, "rev-parse", "--short", sha).strip()
    message = _one_error(err)
    assert message.startswith(f"'conf.json' in {str(repo.root)!r}: the first version (commit "
                              f"{short}) is not XML: line 1, column 1: ")
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["repo"]


def test_from_git_failure_later_leaves_the_output_as_it_was(tmp_path: Path) -> None:
    """A version that cannot be decoded, after good ones, fails the export (status 1); an
    output that existed is left as it was, and no temporary file stays."""
    repo = Repo(tmp_path / "repo")
    repo.write("doc.xml", "<a>ok</a>")
    repo.commit("good")
    repo.write("doc.xml", b"<a>ok\xff</a>")
    repo.commit("bad")
    out = tmp_path / "h.jsonl.gz"
    out.write_bytes(b"before")
    status, _, err = _cli(str(repo.root), "doc.xml", "-o", str(out))
    assert status == 1 and "byte offset 5" in _one_error(err)
    assert out.read_bytes() == b"before"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.jsonl.gz", "repo"]


def test_write_versions_refuses_names_before_asking_for_rows(tmp_path: Path) -> None:
    """write_versions checks the name first: rows that cannot be produced are never asked for."""
    from xmlevents.replay import VersionTableError, write_versions

    def rows() -> Any:
        raise AssertionError("asked for a row")
        yield  # a generator

    with pytest.raises(VersionTableError, match=r"must end in \.jsonl, \.json or \.ndjson"):
        write_versions(rows(), tmp_path / "h.parquet")
    assert write_versions([], tmp_path / "empty.jsonl") == 0
    assert (tmp_path / "empty.jsonl").read_bytes() == b""
