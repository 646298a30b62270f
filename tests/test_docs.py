"""Examples are tests: every module's doctests, and every example in the README and the docs.

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
import doctest
import importlib
import importlib.util
import io
import pathlib
import pkgutil
import re
import shlex
import subprocess
import sys
from typing import Any

import pytest


def _modules() -> list[str]:
    import xmlevents.cel
    import xmlevents.rules
    import xmlevents.service

    names = ["xmlevents", "xmlevents._cli"]
    for package in (xmlevents.algebra, xmlevents.dom, xmlevents.rules, xmlevents.service,
                    xmlevents.cel):
        for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_doctests(name: str) -> None:
    """The examples in the module's docstrings print what they claim."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"


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


def _commands(block: str) -> list[tuple[str, list[str]]]:
    """The ``$ command`` lines of a console block, each with the output lines shown after it."""
    commands: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        elif commands:
            commands[-1][1].append(line)
        else:
            raise AssertionError(f"console block does not start with a command: {line!r}")
    return commands


_CONSOLE = [(page, command, shown) for page in _pages() for block in _blocks(page, "console")
            for command, shown in _commands(block)]


@pytest.mark.parametrize(("page", "command", "shown"), _CONSOLE,
                         ids=[f"{_name(p)}: {c[:50]}" for p, c, _ in _CONSOLE])
def test_console_examples_show_what_the_command_prints(page: pathlib.Path, command: str,
                                                       shown: list[str]) -> None:
    """A console example's command prints exactly the lines shown under it."""
    argv = shlex.split(command)
    assert argv[:1] == ["xmlevents"] and argv[1:2] in (["graph"], ["detect"]), (
        f"{_name(page)}: only `xmlevents graph` and `xmlevents detect` run in console blocks; "
        f"show {command!r} in a ```sh block")
    out = subprocess.run([sys.executable, "-m", "xmlevents", *argv[1:]], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=False)
    while shown and not shown[-1].strip():
        shown = shown[:-1]
    assert out.stdout.splitlines() == shown


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
