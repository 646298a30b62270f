"""The replay with no key given, on five kinds of real history, against the truth by key
(issue 30, item 2).

For each kind (:data:`tests.replay.kinds_truth.KINDS`: a Maven POM, an RSS feed committed by a
bot, an Android manifest, an Android string resource file, the TEI Guidelines' bibliography;
the histories are in ``bench/data``, ``bench/data/README.md`` says where from) the replay with
the keys inferred — what ``xmlevents replay`` does with no ``--key`` — must count the entries
added and removed within 0.8–1.25× of what the versions themselves add and remove, counted by
the key a person would use (an item by its link, a component by ``android:name``, ...). The
counts per way (no key, inferred, expert key) and per kind are printed by
``python3 bench/bench_truth.py --kinds`` and tabled in ``docs/guide/replay.md``
("Truth across kinds of history").
"""

from __future__ import annotations

import pytest

from tests.replay.kinds_truth import KINDS, count, truth
from tests.replay.pom_truth import read_rows
from xmlevents.replay import DiffOptions, replay_history

LOW, HIGH = 0.8, 1.25


def _within(replayed: int, expected: int) -> bool:
    if expected == 0:
        return replayed == 0
    return LOW <= replayed / expected <= HIGH


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(KINDS))
def test_inferred_keys_count_what_the_versions_add_and_remove(name: str) -> None:
    kind = KINDS[name]
    if not kind.path.exists():
        pytest.skip(f"{kind.path} is not here")
    rows = read_rows(kind.path)
    result = replay_history(rows, kind.definitions, options=DiffOptions(keys="auto"),
                            namespaces=dict(kind.namespaces))
    added, removed = count(result.composites)
    truths = truth(rows, kind)
    assert {v for v in (*added, *removed)} <= {t.version for t in truths}
    ta, tr = sum(t.added for t in truths), sum(t.removed for t in truths)
    assert ta, f"{name}: the truth adds nothing: the history measures nothing"
    assert _within(added.total(), ta) and _within(removed.total(), tr), (
        f"{name}: replayed {added.total()} added and {removed.total()} removed; the truth by "
        f"key {ta} and {tr}; keys inferred: {[k.key.label for k in result.inferred]}")
