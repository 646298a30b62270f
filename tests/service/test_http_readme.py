"""The ``curl`` sessions of the README and of the service guide, run as written (issue 18,
item 5): each block's ``xmlevents serve`` line gives the clients, each ``curl`` line is sent
with httpx to a real server, and the session ends with the notification it promises."""

from __future__ import annotations

import itertools
import re
import shlex
from pathlib import Path
from typing import Any

import httpx
import pytest

from .http_server import thread_server

ROOT = Path(__file__).resolve().parents[2]


def _session(path: Path) -> list[str]:
    """The ``sh`` blocks of ``path`` that start the service and that hold the ``curl``
    session (one block or two), as shell words."""
    blocks = re.findall(r"```sh\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
    serve = next(b for b in blocks if "xmlevents serve" in b)
    session = next(b for b in blocks if "curl " in b)
    text = serve if serve is session else serve + "\n" + session
    return shlex.split(text.replace("\\\n", " "), comments=True)


def _commands(words: list[str]) -> list[list[str]]:
    commands: list[list[str]] = []
    for word in words:
        if word in ("curl", "python3"):
            commands.append([word])
        else:
            commands[-1].append(word)
    return commands


def _request(args: list[str], base: str) -> tuple[str, str, dict[str, str], bytes | None]:
    method, url, headers, data = "GET", "", {}, None
    it = iter(args)
    for arg in it:
        if arg == "-X":
            method = next(it)
        elif arg == "-H":
            name, _, value = next(it).partition(":")
            headers[name.strip()] = value.strip()
        elif arg in ("-d", "--data"):
            data = next(it).encode()
            method = "POST" if method == "GET" else method
        elif arg.startswith("-"):
            assert arg in ("-s", "--silent"), f"an option the test does not know: {arg}"
        else:
            url = re.sub(r"^(http://)?localhost:8765", base, arg)
    return method, url, headers, data


@pytest.mark.parametrize("doc", ["README.md", "docs/guide/service.md"])
def test_the_curl_session_works(doc: str, tmp_path: Path) -> None:
    commands = _commands(_session(ROOT / doc))
    serve = commands[0]
    assert serve[:4] == ["python3", "-m", "xmlevents", "serve"], serve
    tokens: dict[str, str] = {}
    for flag, value in itertools.pairwise(serve):
        if flag == "--token":
            name, _, secret = value.partition("=")
            tokens[secret] = name
    answers: list[Any] = []
    with thread_server(str(tmp_path / "service.db"), tokens) as base:
        for args in commands[1:]:
            assert args[0] == "curl"
            method, url, headers, data = _request(args[1:], base)
            r = httpx.request(method, url, headers=headers, content=data)
            assert r.status_code < 300, (args, r.status_code, r.text)
            answers.append(r.json())
    ident = answers[0]["id"]
    assert answers[1] == {"accepted": 2}
    [note] = answers[-1]["notifications"]
    assert (note["cursor"], note["expression"], note["bindings"], note["next"]) == (
        1, ident, {"T": "Boy"}, ident)
    assert [e["type"] for e in note["events"]] == ["newCD", "newMusicDVD"]
