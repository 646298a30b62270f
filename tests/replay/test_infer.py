"""Keys inferred from the history (issue 30, item 1; :mod:`xmlevents.replay._infer`).

Checked: the key a person would name on histories of the usual shapes (a catalogue whose
items are renamed, a feed whose posts are retitled, a pom whose dependencies need two
fields, namespaced), no key where nothing identifies, the thresholds, the choice among
candidates; that the sample is the same however the rows come (the streaming pass of the
local engine and the driver's plan of Spark read the same versions and give the same keys,
a property on random histories); the options (``keys="auto"``), the replay's key rows and
result, and the command line (``--show-keys``, ``--no-key``, the summary).
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents._cli import main
from xmlevents.replay import (
    AUTO,
    DiffOptions,
    Key,
    KeySpecError,
    parse_version,
    replay_history,
    show_keys,
)
from xmlevents.replay._history import ordered_versions
from xmlevents.replay._infer import (
    COVERAGE,
    PAIRS,
    KeyInference,
    infer_keys,
    infer_pairs,
    sample_plan,
    sample_starts,
)


def rows_of(versions: list[str], doc: str = "d") -> list[dict[str, Any]]:
    return [{"doc": doc, "version": v, "xml": x} for v, x in enumerate(versions)]


def inferred(rows: list[dict[str, Any]]) -> list[str]:
    """The labels of the keys inferred from ``rows`` (the streaming pass)."""
    grouped, _ = ordered_versions(rows)
    found = infer_keys((r for vs in grouped.values() for r in vs),
                       {d: len(vs) for d, vs in grouped.items()}, parse_version).keys()
    return [k.key.label for k in found]


def catalogue(items: list[tuple[str, str, str]]) -> str:
    body = "".join(f'<item id="{i}"><name>{n}</name><price>{p}</price></item>'
                   for i, n, p in items)
    return f"<catalogue>{body}</catalogue>"


def test_a_catalogue_whose_items_are_renamed_is_keyed_by_its_ids() -> None:
    """Names are unique in every version, but an item keeps its id when renamed: the name
    changes while the element persists (its other fields equal), so it is no key."""
    rng = random.Random(1)
    items = [(f"i{k}", f"thing {k}", str(k % 7)) for k in range(30)]
    versions = []
    for v in range(12):
        k = rng.randrange(len(items))
        i, _, p = items[k]
        items[k] = (i, f"renamed {v}", p)
        versions.append(catalogue(items))
    assert inferred(rows_of(versions)) == ["item=@id"]


def feed_versions(count: int = 8) -> list[str]:
    """An RSS feed's versions: titles unique, one post retitled (version 3), a new post
    first (version 5); the links stay."""
    posts = [(f"https://b.example/{k}", f"Post {k}") for k in range(6)]
    versions = []
    for v in range(count):
        if v == 3:
            posts[2] = (posts[2][0], "Post 2, corrected")
        if v == 5:
            posts.insert(0, ("https://b.example/new", "A new post"))
        items = "".join(f"<item><title>{t}</title><link>{u}</link></item>" for u, t in posts)
        versions.append(f"<rss><channel><title>B</title>{items}</channel></rss>")
    return versions


def test_a_feed_whose_posts_are_retitled_is_keyed_by_link_not_title() -> None:
    """An RSS feed: titles are unique but a post is retitled; its link stays."""
    assert inferred(rows_of(feed_versions())) == ["item=link"]


def test_dependencies_need_two_fields_and_namespaces_are_kept() -> None:
    """Neither groupId nor artifactId alone is unique among the siblings: the pair is."""
    ns = "http://maven.apache.org/POM/4.0.0"
    deps = [("org.a", "core"), ("org.a", "util"), ("org.b", "core"), ("org.b", "io")]
    versions = []
    for v in range(6):
        if v == 3:
            deps.append(("org.c", "util"))
        body = "".join(f"<dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
                       f"<version>1.{v}</version></dependency>" for g, a in deps)
        versions.append(f'<project xmlns="{ns}"><dependencies>{body}</dependencies></project>')
    grouped, _ = ordered_versions(rows_of(versions))
    keys = infer_keys(grouped["d"], {"d": len(versions)}, parse_version).keys()
    assert [str(k.key) for k in keys] == [
        f"{{{ns}}}dependency={{{ns}}}artifactId,{{{ns}}}groupId"]
    assert keys[0].key.label == "dependency=artifactId,groupId"


def test_nothing_that_identifies_is_no_key() -> None:
    """List items with repeated texts and a field that is often missing: no key."""
    versions = [f"<ul>{'<li>x</li>' * (3 + v)}<li class='a'>y</li></ul>" for v in range(5)]
    assert inferred(rows_of(versions)) == []


def test_a_field_missing_from_too_many_occurrences_is_no_key() -> None:
    """Present in fewer than COVERAGE of the occurrences: not a key."""
    n = 20
    missing = int(n * (1 - COVERAGE)) + 1
    def version(v: int) -> str:
        items = "".join(f'<i k="{j}"/>' if j >= missing else "<i/>" for j in range(n))
        return f"<r>{items}<!-- {v} --></r>"
    assert inferred(rows_of([version(v) for v in range(4)])) == []


def test_the_smallest_then_the_most_stable_key_wins_attributes_first() -> None:
    """Two single fields qualify: the attribute before the child; a pair only without
    any single field."""
    def version(v: int) -> str:
        return "<r>" + "".join(f'<i n="{j}"><m>{j}</m></i>' for j in range(4 + v)) + "</r>"
    versions = [version(v) for v in range(4)]
    assert inferred(rows_of(versions)) == ["i=@n"]


# --- the sample ---------------------------------------------------------------------------------


@given(st.integers(0, 200), st.integers(1, 20))
def test_the_pairs_read_are_consecutive_spread_and_few(count: int, pairs: int) -> None:
    starts = sample_starts(count, pairs)
    assert len(starts) <= min(pairs, max(0, count - 1))
    assert all(0 <= s < count - 1 for s in starts)
    if count >= 2:
        assert 0 in starts and (pairs == 1 or count - 2 in starts)


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A few documents of lists whose items carry an id and a label, edited at random (a
    version that is not XML now and then), the rows shuffled."""
    rows = []
    for d in range(draw(st.integers(1, 4))):
        items = [(f"k{j}", f"x{draw(st.integers(0, 3))}") for j in range(draw(st.integers(0, 5)))]
        for v in range(draw(st.integers(1, 25))):
            op = draw(st.sampled_from(("add", "drop", "relabel", "none")))
            if op == "add":
                items.append((f"k{len(items) + v * 10}", "new"))
            elif op == "drop" and items:
                items.pop(draw(st.integers(0, len(items) - 1)))
            elif op == "relabel" and items:
                j = draw(st.integers(0, len(items) - 1))
                items[j] = (items[j][0], f"x{v}")
            body = "".join(f'<e id="{i}"><l>{lab}</l></e>' for i, lab in items)
            xml = f"<list>{body}</list>" if draw(st.integers(0, 15)) else "<list><e>"
            rows.append({"doc": f"doc{d}", "version": v, "xml": xml})
    return draw(st.permutations(rows))


@settings(max_examples=examples(100), deadline=None)
@given(histories())
def test_the_drivers_plan_reads_what_the_streaming_pass_reads(rows: list[dict[str, Any]]
                                                              ) -> None:
    """Spark's driver (each document's version numbers, then the sampled texts) and the
    local engine's pass over the rows in order give the same evidence: the same keys,
    with the same figures."""
    grouped, _ = ordered_versions(rows)
    streamed = infer_keys((r for vs in grouped.values() for r in vs),
                          {d: len(vs) for d, vs in grouped.items()}, parse_version).keys()
    plan = sample_plan({d: [int(r["version"]) for r in vs] for d, vs in grouped.items()})
    texts = {(d, int(r["version"])): r["xml"] for d, vs in grouped.items() for r in vs}
    planned = infer_pairs(plan, texts, parse_version).keys()
    assert planned == streamed


def test_long_histories_are_read_in_a_sample() -> None:
    """A document of 1,000 versions: PAIRS pairs are parsed, not 1,000 versions."""
    parsed = []

    def parse(xml: str) -> Any:
        parsed.append(xml)
        return parse_version(xml)

    versions = [catalogue([(f"i{k}", f"n{k}", str(v)) for k in range(3)]) for v in range(1000)]
    infer_keys(rows_of(versions), {"d": 1000}, parse)
    assert len(parsed) == 2 * PAIRS


def test_an_inference_of_nothing_is_empty() -> None:
    assert KeyInference().keys() == []


# --- options, replays ---------------------------------------------------------------------------


def test_auto_among_the_keys_sets_inference_and_keeps_the_keys_given() -> None:
    given_key = Key.parse("item=@sku")
    assert DiffOptions(keys=AUTO).infer_keys and DiffOptions(keys=AUTO).keys == ()
    both = DiffOptions(keys=[AUTO, given_key])  # type: ignore[arg-type]
    assert both.infer_keys and both.keys == (given_key,)
    with pytest.raises(KeySpecError):
        DiffOptions(keys="automatic")  # type: ignore[arg-type]
    done = both.with_inferred([Key.parse("item=@id"), Key.parse("order=@id")])
    assert not done.infer_keys
    assert [str(k) for k in done.keys] == ["item=@sku", "order=@id"]  # the given one wins


def test_a_replay_with_keys_inferred_reports_them_and_diffs_with_them() -> None:
    """replay_history with keys="auto": the result's inferred keys, one error row each
    (stage key, no document), and the events of a replay with those keys given."""
    rng = random.Random(3)
    items = [(f"i{k}", f"thing {k}", str(k)) for k in range(8)]
    versions = []
    for v in range(10):
        rng.shuffle(items)
        k = rng.randrange(len(items))
        items[k] = (items[k][0], f"renamed {v}", items[k][2])
        versions.append(catalogue(items))
    rows = rows_of(versions)
    auto = replay_history(rows, options=DiffOptions(keys=AUTO))  # type: ignore[arg-type]
    assert [k.key.label for k in auto.inferred] == ["item=@id"]
    assert [(e["doc"], e["stage"]) for e in auto.errors] == [(None, "key")]
    assert auto.errors[0]["message"].startswith("key item=@id inferred: present in 100%")
    keyed = replay_history(rows, options=DiffOptions(keys=(Key.parse("item=@id"),)))
    assert auto.events == keyed.events


# --- the command line ---------------------------------------------------------------------------


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["replay", *args], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def feed(tmp_path: Path) -> Path:
    path = tmp_path / "feed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows_of(feed_versions(), "feed.xml")),
                    encoding="utf-8")
    return path


def test_show_keys_prints_them_and_replays_nothing(feed: Path, tmp_path: Path) -> None:
    status, out, err = _cli(str(feed), "--show-keys")
    assert status == 0, err
    assert out.splitlines()[0] == f"keys of {feed}"
    assert out.splitlines()[1].split()[:3] == ["item=link", "100%", "present,"]
    assert out.splitlines()[2].strip() == "--key item=link"
    assert not (tmp_path / "out").exists()


def test_the_summary_names_the_keys_inferred_and_no_key_turns_them_off(
        feed: Path, tmp_path: Path) -> None:
    defs = "Retitled := upd(item/title/text())"
    status, out, err = _cli(str(feed), "-o", str(tmp_path / "a"), "--engine", "local",
                            "--define", defs, "-q", "--show", "0")
    assert status == 0, err
    assert "  keys inferred     item=link (100% present, 100% unique, 100% stable; " in out
    assert "  composite events  Retitled 1\n" in out  # the corrected title, only
    status, out, err = _cli(str(feed), "-o", str(tmp_path / "b"), "--engine", "local",
                            "--define", defs, "-q", "--show", "0", "--no-key")
    assert status == 0, err
    assert "keys inferred" not in out
    errors = ds.dataset(str(tmp_path / "b" / "errors")).to_table().to_pylist()
    assert not any(e["stage"] == "key" for e in errors)


@pytest.mark.parametrize(("args", "message"), [
    (["--no-key", "--key", "a=@b"], "--no-key and --key a=@b: give one"),
    (["--no-key", "--show-keys"], "--no-key and --show-keys: give one"),
    (["--key", "a=@b", "--show-keys"], "--show-keys shows the keys inferred: add --key auto"),
])
def test_key_options_that_contradict_are_usage_errors(feed: Path, tmp_path: Path,
                                                      args: list[str], message: str) -> None:
    status, _, err = _cli(str(feed), "-o", str(tmp_path / "o"), "--engine", "local", *args)
    assert status == 2
    assert err == f"xmlevents: error: {message}\n"


def test_show_keys_api_gives_the_keys_given_and_those_inferred(feed: Path) -> None:
    given_key = Key.parse("channel=title")
    given, found = show_keys(str(feed), DiffOptions(keys=(given_key,), infer_keys=True))
    assert given == [given_key]
    assert [k.key.label for k in found] == ["item=link"]
