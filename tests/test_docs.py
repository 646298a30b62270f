"""Examples are tests: every example in the README and the docs (the modules' doctests run in
tests/test_doctests.py, the one collector).

The README and the pages under ``docs/`` are checked the same way:

* each ```python block runs (the blocks of one page in order, in one namespace, as a reader
  would type them), and its output is exactly the lines its comments announce: the value after
  ``print(...)  # `` on a line, and the text after ``# prints: `` on a line of its own (what a
  callback prints), in the order they appear;
* each ```console block runs its ``$ xmlevents graph|detect ...`` commands and shows exactly
  their standard output (```sh blocks are shown, not run: the Spark job, installs);
* the event trees drawn in ``docs/figures`` are what ``xmlevents graph --dot`` prints today,
  and the errors page lists every error class the packages export.
"""

import contextlib
import importlib
import importlib.util
import io
import os
import pathlib
import re
import subprocess
import sys
from typing import Any

import pytest


def test_algebra_imports_no_outside_packages() -> None:
    """The algebra layer imports only the standard library (DESIGN section 1)."""
    import subprocess
    import sys

    code = ("import sys, xmlevents.algebra, xmlevents.algebra._graph, xmlevents.algebra._render;"
            "bad = [m for m in ('lxml', 'blinker', 'pyspark') if m in sys.modules];"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
FIGURES = DOCS / "figures"

# A fenced block at any indentation: its indentation, its language, its text.
_BLOCK = re.compile(r"^( *)```(\w*)[^\n]*\n(.*?)^\1```", re.S | re.M)
_PRINTED = re.compile(r"^\s*print\(.*\)\s+# (.*)$")
_PRINTS = re.compile(r"^\s*# prints: (.*)$")


def _pages() -> list[pathlib.Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def _blocks(page: pathlib.Path, language: str) -> list[str]:
    text = page.read_text(encoding="utf-8")
    blocks = []
    for m in _BLOCK.finditer(text):
        if m.group(2) == language:
            indent = len(m.group(1))
            blocks.append("".join(line[indent:] for line in m.group(3).splitlines(True)))
    return blocks


def _announced(block: str) -> list[str]:
    """The output lines a block's comments announce, in order."""
    out = []
    for line in block.splitlines():
        m = _PRINTED.match(line) or _PRINTS.match(line)
        if m:
            out.append(m.group(1).strip())
    return out


def _name(page: pathlib.Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", [p for p in _pages() if _blocks(p, "python")], ids=_name)
def test_python_examples_print_what_their_comments_say(page: pathlib.Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A page's Python examples run in order, each printing exactly what its comments say."""
    monkeypatch.chdir(ROOT)  # examples name files relative to the repository
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    for i, block in enumerate(_blocks(page, "python"), start=1):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, f"{_name(page)}, python block {i}", "exec"), namespace)
        printed = out.getvalue().splitlines()
        assert printed == _announced(block), f"{_name(page)}, python block {i}"


# Command blocks (issue 28): every ```sh and ```console block of the README and docs/ runs,
# unless an HTML comment right before it says why not. The conventions (docs/contributing.md,
# "The documentation"):
#
# * ``<!-- illustrative: REASON -->`` before a block: shown, not run (an install, the test suite
#   itself, a server in one terminal and clients in another, a clone of another repository);
# * ``<!-- slow: REASON -->``: runs as its own slow test (Spark), in a scratch folder of its own;
# * any other block runs: a page's blocks in order, in one scratch folder that links the
#   repository's files (so ``examples/...`` is there, and what a block writes is left behind
#   for the next), with ``python3`` and ``xmlevents`` this interpreter and this checkout;
#   ``/tmp/`` in a command is a folder of the scratch (outputs never collide);
# * a ```sh block is one script run with ``bash -e -o pipefail``: every command must succeed;
#   a leading ``python3 -m pip install ... &&`` is not run (the tests run installed);
# * a ```console block is ``$ command`` lines (continued by a trailing backslash), each
#   followed by the standard output it shows: the command must succeed and print exactly
#   that, except that a line ``...`` stands for any lines and durations (a number then ``s``)
#   are not compared; a command shown failing ends its output with ``(exit status N)``, and
#   shows its standard output then its standard error.

_MARK = re.compile(r"<!--\s*(illustrative|slow):((?:(?!-->).)*)-->\s*\Z", re.S)
_RUNNABLE = ("sh", "console")
_INSTALL = re.compile(r"^python3 -m pip install [^&\n]*&& ", re.M)
_DURATION = re.compile(r"\b\d+(?:\.\d+)? s\b")
_STATUS = re.compile(r"\(exit status (\d+)\)")


class _Block:
    """A fenced command block of a page: where it is, what it holds, how it is marked."""

    def __init__(self, page: pathlib.Path, line: int, language: str, text: str,
                 mark: str | None, reason: str) -> None:
        self.page, self.line, self.language, self.text = page, line, language, text
        self.mark, self.reason = mark, reason

    def __repr__(self) -> str:
        return f"{_name(self.page)}:{self.line} ({self.language})"


def _command_blocks(page: pathlib.Path) -> list[_Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for m in _BLOCK.finditer(text):
        if m.group(2) not in _RUNNABLE:
            continue
        indent = len(m.group(1))
        body = "".join(line[indent:] for line in m.group(3).splitlines(True))
        mark = _MARK.search(text[:m.start()].rstrip() + "\n")
        found.append(_Block(page, text.count("\n", 0, m.start()) + 1, m.group(2), body,
                            mark.group(1) if mark else None,
                            mark.group(2).strip() if mark else ""))
    return found


_COMMAND_BLOCKS = [block for page in _pages() for block in _command_blocks(page)]


def _scratch(tmp: pathlib.Path) -> tuple[pathlib.Path, dict[str, str]]:
    """A folder that links every top-level entry of the repository, and the environment the
    blocks run in: ``python3`` and ``xmlevents`` are this interpreter on this checkout."""
    work, bin_dir = tmp / "work", tmp / "bin"
    work.mkdir()
    bin_dir.mkdir()
    (work / "tmp").mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in {".git", "build", "site", "tmp"}:
            (work / entry.name).symlink_to(entry)
    for name, argv in {"python3": "", "python": "", "xmlevents": " -m xmlevents"}.items():
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}"{argv} "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               # the folders linked in the scratch are not packages to import from: the
               # installed layout (or PYTHONPATH's) is
               PYTHONSAFEPATH="1", NO_MKDOCS_2_WARNING="1",
               GIT_AUTHOR_NAME="docs", GIT_AUTHOR_EMAIL="docs@example.org",
               GIT_COMMITTER_NAME="docs", GIT_COMMITTER_EMAIL="docs@example.org")
    return work, env


def _console_commands(block: str) -> list[tuple[str, list[str]]]:
    """The ``$ command`` lines of a console block (with their continuation lines), each with
    the output lines shown after it."""
    commands: list[tuple[str, list[str]]] = []
    continued = False
    for line in block.splitlines():
        if continued:
            commands[-1] = (commands[-1][0] + "\n" + line, [])
        elif line.startswith("$ "):
            commands.append((line[2:], []))
        elif commands:
            commands[-1][1].append(line)
        else:
            raise AssertionError(f"console block does not start with a command: {line!r}")
        continued = line.endswith("\\") and not commands[-1][1]
    return commands


def _shows(shown: list[str], printed: list[str]) -> bool:
    """Whether ``printed`` is what ``shown`` shows: ``...`` lines stand for any lines,
    durations are not compared."""
    while shown and not shown[-1].strip():
        shown = shown[:-1]
    pattern = "".join(r"(?:[^\n]*\n)*?" if line.strip() == "..."
                      else re.escape(_DURATION.sub("N s", line)) + r"\n" for line in shown)
    text = "".join(_DURATION.sub("N s", line) + "\n" for line in printed)
    return re.fullmatch(pattern, text) is not None


def _run_block(block: _Block, work: pathlib.Path, env: dict[str, str], timeout: int) -> None:
    tmp = f"{work}/tmp/"
    where = repr(block)
    if block.language == "sh":
        script = _INSTALL.sub("", block.text).replace("/tmp/", tmp)
        out = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=work, env=env,
                             capture_output=True, text=True, timeout=timeout, check=False)
        assert out.returncode == 0, f"{where}: status {out.returncode}\n{out.stderr[-2000:]}"
        return
    for command, shown in _console_commands(block.text):
        out = subprocess.run(["bash", "-o", "pipefail", "-c", command.replace("/tmp/", tmp)],
                             cwd=work, env=env, capture_output=True, text=True,
                             timeout=timeout, check=False)
        shown = shown[:]
        while shown and not shown[-1].strip():
            shown.pop()
        status = _STATUS.fullmatch(shown[-1]) if shown else None
        if status:  # a command shown failing: its status, and stdout then stderr
            shown.pop()
        expected = int(status.group(1)) if status else 0
        assert out.returncode == expected, (
            f"{where}: {command!r} exited {out.returncode}\n{out.stderr[-2000:]}")
        text = out.stdout + out.stderr if status else out.stdout
        printed = text.replace(tmp, "/tmp/").splitlines()
        assert _shows(shown, printed), (
            f"{where}: {command!r} printed\n" + "\n".join(printed) + "\nbut the page shows\n"
            + "\n".join(shown))


_RUN_PAGES = sorted({b.page for b in _COMMAND_BLOCKS if b.mark is None})


# Slow: a page's blocks start the command line 5-30 times (17 s of the fast loop's CPU).
@pytest.mark.slow
@pytest.mark.parametrize("page", _RUN_PAGES, ids=_name)
def test_command_blocks_run_and_show_what_they_print(page: pathlib.Path,
                                                     tmp_path: pathlib.Path) -> None:
    """A page's unmarked sh and console blocks run in order, each command succeeding, and
    each console command prints what the page shows under it."""
    work, env = _scratch(tmp_path)
    for block in _COMMAND_BLOCKS:
        if block.page == page and block.mark is None:
            _run_block(block, work, env, timeout=300)


def _slow_groups() -> list[list[_Block]]:
    """The blocks marked slow, those that run the same commands grouped: four pages show the
    same Spark job, and one run of it checks them all (each run starts its own JVM, ~40 s)."""
    groups: dict[tuple[str, str], list[_Block]] = {}
    for block in _COMMAND_BLOCKS:
        if block.mark == "slow":
            key = (block.language, _INSTALL.sub("", block.text).strip())
            groups.setdefault(key, []).append(block)
    return list(groups.values())


@pytest.mark.slow
@pytest.mark.parametrize("blocks", _slow_groups(), ids=lambda g: " = ".join(map(repr, g)))
def test_slow_command_blocks_run(blocks: list[_Block], tmp_path: pathlib.Path) -> None:
    """A block marked slow (the Spark job) runs on its own, as an unmarked block would; the
    pages that show the very same commands share one run."""
    work, env = _scratch(tmp_path)
    _run_block(blocks[0], work, env, timeout=1800)


_FENCED = re.compile(r"^( *)```.*?^\1```", re.S | re.M)
_INLINE_COMMAND = re.compile(r"`((?:python3 -m xmlevents|printf) [^`]*xmlevents[^`]*)`")


def _inline_commands(page: pathlib.Path) -> list[str]:
    """The commands a page gives inline (`` `python3 -m xmlevents ...` ``, or a ``printf``
    piped into it), outside its fenced blocks; a code span may go over a line break."""
    text = _FENCED.sub("", page.read_text(encoding="utf-8")).replace("\n", " ")
    return _INLINE_COMMAND.findall(text)


@pytest.mark.parametrize("page", [p for p in _pages() if _inline_commands(p)], ids=_name)
def test_inline_commands_run(page: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """A command a page gives inline runs as written and succeeds (issue 28: the README's
    `query` read a document.xml that no one has)."""
    work, env = _scratch(tmp_path)
    for command in _inline_commands(page):
        out = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=env,
                             capture_output=True, text=True, timeout=300, check=False)
        assert out.returncode == 0, f"{_name(page)}: {command!r}: {out.stderr[-2000:]}"
        assert out.stdout, f"{_name(page)}: {command!r} printed nothing"


def test_blocks_shown_not_run_say_why() -> None:
    """Every marked block gives its reason, every marker stands right before a command block,
    and a block of commands with prompts is a console block (so its output is checked)."""
    marked = [b for b in _COMMAND_BLOCKS if b.mark]
    assert all(b.reason for b in marked), [b for b in marked if not b.reason]
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        markers = len(re.findall(r"^<!--\s*(?:illustrative|slow):", text, re.M))
        assert markers == sum(1 for b in marked if b.page == page), (
            f"{_name(page)}: a marker that is not right before a sh or console block")
        for m in _BLOCK.finditer(text):
            first = m.group(3).lstrip().split("\n", 1)[0]
            if m.group(2) != "console":
                assert not first.startswith("$ "), (
                    f"{_name(page)}: a ```{m.group(2)} block with a prompt: make it ```console")


def test_the_conventions_parse_what_they_claim() -> None:
    """The block conventions hold on small cases: wildcards, durations, continuations."""
    assert _shows(["a", "...", "d"], ["a", "b", "c", "d"])
    assert _shows(["a", "...", "b"], ["a", "b"])
    assert not _shows(["a", "b"], ["a", "c"])
    assert not _shows(["a"], ["a", "b"])
    assert _shows(["  time  2.1 s (replay 1.7 s)", ""], ["  time  30.6 s (replay 18.3 s)"])
    assert not _shows(["3,401 events"], ["3,402 events"])
    assert _console_commands("$ a \\\n  b\nout\n$ c\n") == [("a \\\n  b", ["out"]), ("c", [])]
    assert _MARK.search("x\n<!-- illustrative: why -->\n") is not None
    assert _MARK.search("<!-- illustrative: why -->\ntext\n") is None
    assert _MARK.search("<!-- illustrative: why -->\ntext <!-- other -->\n") is None


def _make_figures() -> Any:
    spec = importlib.util.spec_from_file_location("make_figures", FIGURES / "make_figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_FIGURES = _make_figures()


@pytest.mark.parametrize("name", sorted(_FIGURES.TREES))
def test_event_tree_figures_are_what_the_cli_draws(name: str) -> None:
    """A figure's stored DOT is what `xmlevents graph --dot` prints for its definitions now
    (run `python3 docs/figures/make_figures.py` after changing the language or the drawing)."""
    _title, definitions = _FIGURES.TREES[name]
    stored = (FIGURES / f"{name}.dot").read_text(encoding="utf-8")
    assert _FIGURES.tree_dot(definitions) == stored
    assert (FIGURES / f"{name}.svg").is_file()


def test_every_example_from_10_to_17_has_a_figure_shown_in_the_docs() -> None:
    """Examples 10-17 of the paper each map to a figure, and every figure appears on a page."""
    assert sorted(_FIGURES.EXAMPLES) == list(range(10, 18))
    assert set(_FIGURES.EXAMPLES.values()) == set(_FIGURES.TREES)
    shown = "".join(p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md"))
    for name in [*_FIGURES.TREES, *_FIGURES.DIAGRAMS]:
        assert f"figures/{name}.svg" in shown, name
        assert (FIGURES / f"{name}.svg").is_file(), name


def test_the_cel_structure_figure_is_what_the_evaluator_holds() -> None:
    """The CEL guide's picture of the structure of runs is drawn from the automaton
    evaluator's own structure (run `python3 docs/figures/make_figures.py` after changing it)."""
    query, letters, name = _FIGURES.CEL_RUNS
    assert (FIGURES / f"{name}.dot").read_text(encoding="utf-8") == _FIGURES.runs_dot(
        query, letters)
    assert (FIGURES / f"{name}.svg").is_file()
    assert f"figures/{name}.svg" in (DOCS / "guide" / "cel.md").read_text(encoding="utf-8")


def _exported_errors() -> dict[str, type]:
    import xmlevents.cel
    import xmlevents.replay
    import xmlevents.rules
    import xmlevents.service

    errors = {}
    for module in (xmlevents, xmlevents.algebra, xmlevents.dom, xmlevents.replay,
                   xmlevents.rules, xmlevents.service, xmlevents.cel):
        for name in module.__all__:
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, xmlevents.XmlEventsError):
                errors[name] = value
    return errors


def _builtins(cls: type) -> list[type]:
    """The most derived built-in exceptions ``cls`` inherits (``KeyError``, not ``LookupError``)."""
    found = [b for b in cls.__mro__
             if b.__module__ == "builtins" and b not in (Exception, BaseException, object)]
    return [b for b in found if not any(o is not b and issubclass(o, b) for o in found)]


def test_errors_page_lists_every_exported_error() -> None:
    """The errors page's hierarchy names every XmlEventsError subclass the packages export,
    each with the built-in exceptions it also is (its first mention is its line in the list)."""
    lines = (DOCS / "reference" / "errors.md").read_text(encoding="utf-8").splitlines()
    for name, cls in _exported_errors().items():
        line = next((x for x in lines if f"`{name}`" in x), None)
        assert line is not None, f"{name} is missing from docs/reference/errors.md"
        for base in _builtins(cls):
            assert base.__name__ in line, f"{name}: the page does not say it is a {base.__name__}"


_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", _pages(), ids=_name)
def test_relative_links_name_existing_files(page: pathlib.Path) -> None:
    """Every relative link of a page (the README's on GitHub too) names a file that exists."""
    text = page.read_text(encoding="utf-8")
    for target in _LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (page.parent / target).exists(), f"{_name(page)} links to missing {target}"


_SNIPPET = re.compile(r'^--8<-- "([^":]+)(?::([\w-]+))?"\s*$', re.M)


def _expanded(page: pathlib.Path) -> str:
    """The page's text with its ``--8<--`` snippets included, as pymdownx.snippets does."""
    def include(m: re.Match[str]) -> str:
        text = (ROOT / m.group(1)).read_text(encoding="utf-8")
        if m.group(2):
            start = f"<!-- --8<-- [start:{m.group(2)}] -->"
            end = f"<!-- --8<-- [end:{m.group(2)}] -->"
            assert start in text and end in text, f"{_name(page)}: no snippet {m.group(0)}"
            text = text[text.index(start) + len(start):text.index(end)]
        return text
    return _SNIPPET.sub(include, page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", sorted(DOCS.rglob("*.md")), ids=_name)
def test_docs_links_stay_on_the_site(page: pathlib.Path) -> None:
    """A page of the site links only to files of docs/ (anything else is a 404 on the site),
    snippets included from another folder too (issue 28: a link in a semantics.md snippet
    broke in guide/replay.md, a guide linked examples/ outside the site)."""
    for target in _LINK.findall(_expanded(page)):
        if "://" in target or target.startswith("mailto:"):
            continue
        resolved = (page.parent / target).resolve()
        assert resolved.is_relative_to(DOCS), f"{_name(page)} links outside docs/: {target}"
        assert resolved.exists(), f"{_name(page)} (snippets included) links to missing {target}"


_TOP = sorted(e.name for e in ROOT.iterdir() if e.is_dir() and e.name not in
              {".git", "build", "site"} and not e.name.endswith(".egg-info"))
# A path from the repository's root: a top-level folder, then names (globs and placeholders
# such as `algebra/*` or `DOC/VERSION.xml` are not paths).
_TOPS = "|".join(map(re.escape, _TOP))
_REPO_PATH = re.compile(rf"(?<![\w./~-])(?:{_TOPS})/[\w./-]*[\w/]")
_BESIDE = re.compile(r"(?<![\w.])(?:\.\./)+[A-Za-z][\w-]*/")


@pytest.mark.parametrize("page", _pages(), ids=_name)
def test_files_a_page_names_exist(page: pathlib.Path) -> None:
    """Every repository path a page names (`examples/...`, `bench/...`, `tests/...`) exists,
    and no page names a folder beside the repository, which a clone lacks (issue 28:
    `../shared/data`)."""
    text = _LINK.sub("]()", page.read_text(encoding="utf-8"))
    for m in _REPO_PATH.finditer(text):
        rest = text[m.end():m.end() + 1]
        if rest in "*{<":
            continue
        assert (ROOT / m.group(0)).exists(), f"{_name(page)} names missing {m.group(0)}"
    assert not _BESIDE.findall(text), f"{_name(page)} names {_BESIDE.findall(text)}"


def test_the_benchmarks_page_lists_every_script() -> None:
    """docs/benchmarks.md's table has a row for every script under bench/ (issue 28: it said
    "three benchmarks" beside 15 scripts)."""
    page = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `(bench/[\w.]+\.py)` \|", page, re.M))
    assert rows == {str(p.relative_to(ROOT)) for p in (ROOT / "bench").glob("*.py")}


def test_every_docs_page_is_in_the_navigation() -> None:
    """mkdocs.yml's nav lists every page under docs/ (strict builds only warn about links)."""
    nav = set(re.findall(r"^\s*-\s*(?:[^:\n]+:\s*)?(\S+\.md)\s*$",
                         (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M))
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert nav == pages


@pytest.mark.parametrize("command", [["detect"], ["graph"], ["replay"], ["history", "from-git"]],
                         ids=" ".join)
def test_cli_reference_names_every_option(command: list[str]) -> None:
    """docs/cli.md names every option `xmlevents COMMAND --help` lists."""
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    shown = subprocess.run([sys.executable, "-m", "xmlevents", *command, "--help"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout
    assert f"## `xmlevents {' '.join(command)}`" in page
    options = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", shown)) - {"-h", "--help"}
    for option in sorted(options):
        assert f"`{option}" in page, f"xmlevents {' '.join(command)} {option} is not in docs/cli.md"
