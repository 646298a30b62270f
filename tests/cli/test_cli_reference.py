"""docs/cli.md describes the command line as its parsers build it (issue 28): every command and
action has its section and its synopsis line, every option its mention, and the exit-status
table is a table (it rendered as text: no blank line before its last row)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from xmlevents._cli._main import COMMANDS, _parser

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")


def _leaves() -> list[tuple[list[str], argparse.ArgumentParser]]:
    """(words, parser) of every command and action (``rules check``, ``history from-git``)."""
    found = []

    def walk(words: list[str], parser: argparse.ArgumentParser) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            found.append((words, parser))
        for sub in subs:
            for name, child in sub.choices.items():
                walk([*words, name], child)

    walk([], _parser())
    return found


LEAVES = _leaves()


def test_every_command_of_the_table_is_reached() -> None:
    """The walk finds every command of the table."""
    assert {words[0] for words, _ in LEAVES} == set(COMMANDS)


@pytest.mark.parametrize(("words", "parser"), LEAVES, ids=[" ".join(w) for w, _ in LEAVES])
def test_the_page_names_every_command_and_option(words: list[str],
                                                 parser: argparse.ArgumentParser) -> None:
    """A section and a synopsis line per command, and every option --help lists."""
    command = " ".join(words)
    assert f"## `xmlevents {command}`" in PAGE
    synopsis = PAGE[PAGE.index("```text\nxmlevents detect"):PAGE.index("## Exit statuses")]
    assert re.search(rf"^xmlevents {re.escape(command)}\b", synopsis, re.M), command
    for action in parser._actions:
        if action.help == argparse.SUPPRESS:
            continue
        for option in action.option_strings:
            if option in ("-h", "--help"):
                continue
            assert f"`{option}" in PAGE or f"[{option}" in synopsis, f"{command} {option}"


def test_the_exit_status_table_is_one_table() -> None:
    """The statuses 0, 1, 2, 3 and 130 are rows of one table with a blank line before it."""
    section = PAGE[PAGE.index("## Exit statuses"):PAGE.index("## Definitions")]
    lines = section.splitlines()
    first = lines.index("| status | when |")
    assert lines[first - 1] == ""
    rows = []
    for line in lines[first + 2:]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1].strip())
    assert rows == ["0", "1", "2", "3", "130"]
