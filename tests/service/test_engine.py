"""The SNOOP-R engine against the examples of seed 001 (sections 2.2, 3.1-3.4).

The paper writes atomic events with positional parameters (``newCD(CDT1, "U2")``); signals
here carry named ones, so the examples name them: a CD or DVD has a ``title`` and an
``artist``, a book a ``title`` and an ``author``, a movie DVD a ``title`` and a ``year``
(Figure 1's ``"2006"``) or a ``director`` (``"Spike Lee"``, section 3.3).
"""

from __future__ import annotations

import pytest

from xmlevents.service import (
    Engine,
    ExpressionTextError,
    RegistrationError,
    SignalError,
    UnknownExpressionError,
    parse_expression,
)

A_FIG1 = 'OR(newBook(title=BT, author="Dan Brown"), newCD(title=CDT1, artist="U2"))'
B_FIG1 = 'SEQ(newCD(title=CDT2, artist="The Corrs"), newMovieDVD(title=MT, year="2006"))'


def cd(title: str, artist: str) -> tuple[str, dict[str, str]]:
    return "newCD", {"title": title, "artist": artist}


def kinds(engine: Engine) -> tuple[int, int]:
    return len(engine.leaves), len(engine.operators)


# --- the event graph: sharing and deletion (sections 3.1, 3.2, 3.4) ---------------------------

def test_figure_1_two_expressions_share_the_newcd_leaf() -> None:
    engine = Engine()
    a = engine.register(A_FIG1)
    b = engine.register(B_FIG1)
    assert sorted(engine.leaves) == ["newBook", "newCD", "newMovieDVD"]  # 3 leaves
    held = engine.leaves["newCD"].definitions
    assert [ident for ident, _ in held] == [a, b]  # A2 and B1 of Figure 1
    assert [str(atomic) for _, atomic in held] == ['newCD(title=CDT1, artist="U2")',
                                                  'newCD(title=CDT2, artist="The Corrs")']
    stats = engine.stats()
    assert stats["nodes"] == 5 and stats["nodes_without_sharing"] == 6


def test_figure_3_unregistering_b_then_a_empties_the_graph() -> None:
    engine = Engine()
    a = engine.register(A_FIG1)
    b = engine.register(B_FIG1)
    engine.signal("newCD", {"title": "X", "artist": "The Corrs"})  # B stores an instance
    engine.unregister(b)
    assert sorted(engine.leaves) == ["newBook", "newCD"]
    assert [ident for ident, _ in engine.leaves["newCD"].definitions] == [a]
    assert [op.kind for op in engine.operators] == ["OR"]
    # A still detects as before
    assert [d.bindings for d in engine.signal(*cd("Boy", "U2"))] == [{"CDT1": "Boy"}]
    engine.unregister(a)
    assert kinds(engine) == (0, 0)
    assert engine.stats()["nodes"] == 0
    with pytest.raises(UnknownExpressionError):
        engine.unregister(a)


def test_an_equal_subexpression_is_one_node_with_storage_per_expression() -> None:
    engine = Engine()
    sub = 'SEQ(newCD(title=T, artist="U2"), newMusicDVD(title=T, artist="U2"))'
    a = engine.register(f"OR({sub}, newBook(title=B))")
    b = engine.register(f"SEQ({sub}, newBook(title=B))")
    seqs = [op for op in engine.operators if op.kind == "SEQ"]
    assert len(seqs) == 2  # the shared inner SEQ and B's outer one
    shared = [op for op in seqs if len(op.uses) == 2]
    assert len(shared) == 1
    engine.signal("newCD", {"title": "Boy", "artist": "U2"})
    assert [d.expression for d in engine.signal(
        "newMusicDVD", {"title": "Boy", "artist": "U2"})] == [a]
    # B's occurrence of the shared SEQ stored its instance for B's outer SEQ
    assert [d.expression for d in engine.signal("newBook", {"title": "x"})] == [a, b]
    engine.unregister(a)
    assert len(shared[0].uses) == 1 and shared[0] in engine.operators


def test_registering_after_signals_does_not_see_earlier_instances() -> None:
    engine = Engine()
    sub = 'SEQ(newCD(title=T), newMusicDVD(title=T))'
    engine.register(f"OR({sub}, z)")
    engine.signal("newCD", {"title": "Boy"})
    late = engine.register(f"OR({sub}, y)")  # shares the SEQ node; its storage is its own
    detected = engine.signal("newMusicDVD", {"title": "Boy"})
    assert late not in [d.expression for d in detected]
    assert len(detected) == 1


def test_a_bad_expression_leaves_shared_nodes_intact() -> None:
    engine = Engine()
    a = engine.register(A_FIG1)
    before = engine.stats()
    for bad in ['OR(newBook(title=BT, author="Dan Brown"), newCD(title=CDT1, artist=',
                'SEQ(newCD(title=CDT1, artist="U2"), FOO(x)',
                'ANY(0, newCD(title=T), newBook(title=T))']:
        with pytest.raises(ExpressionTextError):
            engine.register(bad)
    with pytest.raises(RegistrationError):
        engine.register('OR(newCD(title=T, artist="U2"), newBook(title=B))', {"Z": "unused"})
    with pytest.raises(RegistrationError):
        engine.register('OR(newCD(title=T), OPAQUE("http://languages.org/prolog", "?- x."))')
    assert engine.stats() == before
    assert [d.expression for d in engine.signal(*cd("Boy", "U2"))] == [a]


def test_opaque_leaves_are_never_shared() -> None:
    engine = Engine(providers={"urn:p": lambda req: f"ev-{req.expression}"})
    text = 'OR(OPAQUE("urn:p", "same code", X), newCD(title=X))'
    engine.register(text)
    engine.register(text)
    stats = engine.stats()
    # the newCD leaf is shared; the two opaque leaves and the two ORs are not (an OR over an
    # opaque leaf is not an equal subexpression: the engine cannot compare opaque ones)
    assert stats["leaves"] == 3 and stats["operators"] == 2


# --- detection (section 3.3) ----------------------------------------------------------------

def test_parent_disambiguation() -> None:
    """newCD("Boy", "U2") activates E1's OR and A's SEQ, not E2's OR nor B's SEQ."""
    e1 = 'OR(newCD(title=CDT1, artist="U2"), newBook(title=BT1, author="Dan Brown"))'
    e2 = 'OR(newCD(title=CDT2, artist="REM"), newBook(title=BT2, author="Cortazar"))'
    activated: list[tuple[str, str]] = []
    engine = Engine(trace=lambda expression, kind, use: activated.append((expression, kind)))
    a = engine.register(f'SEQ(newMovieDVD(title=MvT, director="Spike Lee"), {e1})')
    b = engine.register(f'SEQ({e2}, newMusicDVD(title=MuT, artist="U2"))')
    engine.signal("newMovieDVD", {"title": "Malcolm X", "director": "Spike Lee"})
    activated.clear()
    detected = engine.signal(*cd("Boy", "U2"))
    assert activated == [(a, "OR"), (a, "SEQ")]
    assert [d.expression for d in detected] == [a]
    assert b not in {e for e, _ in activated}
    assert detected[0].bindings == {"MvT": "Malcolm X", "CDT1": "Boy"}


def test_binding_join_equal_titles_only() -> None:
    for join in ("correlate", "paper"):
        engine = Engine(join=join)  # type: ignore[arg-type]
        engine.register('SEQ(newCD(title=T, artist="U2"), newMusicDVD(title=T, artist="U2"))')
        engine.signal(*cd("Boy", "U2"))
        assert engine.signal("newMusicDVD", {"title": "War", "artist": "U2"}) == []
        [d] = engine.signal("newMusicDVD", {"title": "Boy", "artist": "U2"})
        assert d.bindings == {"T": "Boy"}
        assert [s.type for s in d.events] == ["newCD", "newMusicDVD"]


def test_the_paper_join_discards_where_correlation_finds_an_older_match() -> None:
    text = "SEQ(newCD(title=T), newMusicDVD(title=T))"
    found = {}
    for join in ("correlate", "paper"):
        engine = Engine(join=join)  # type: ignore[arg-type]
        engine.register(text)
        engine.signal("newCD", {"title": "Boy"})
        engine.signal("newCD", {"title": "War"})
        found[join] = [d.bindings for d in engine.signal("newMusicDVD", {"title": "Boy"})]
    assert found == {"correlate": [{"T": "Boy"}], "paper": []}


def test_paper_join_at_any_discards_the_last_instance_received() -> None:
    engine = Engine(join="paper")
    engine.register("ANY(2, a(x=X), b(x=X))")
    engine.signal("a", {"x": 1})
    assert engine.signal("b", {"x": 2}) == []  # mismatch: b(2) is discarded ...
    assert engine.signal("a", {"x": 2}) == []  # ... so a(2) finds no b to meet
    assert [d.bindings for d in engine.signal("b", {"x": 2})] == [{"X": 2}]


def test_binding_validity_three_cases() -> None:
    """Section 3.3's newBook(Title, "Dan Brown", price): Title an output variable."""
    engine = Engine()
    e = engine.register('newBook(title=Title, author="Dan Brown")')
    # valid: Title bound
    [d] = engine.signal("newBook", {"title": "The Da Vinci Code", "author": "Dan Brown",
                                    "price": "23.90"})
    assert d.bindings == {"Title": "The Da Vinci Code"} and d.expression == e
    # no bindings produced: Title cannot be bound, the instance is discarded
    assert engine.signal("newBook", {"author": "Dan Brown"}) == []
    # a tuple binding Price but not Title is discarded too (opaque providers' tuples)
    from xmlevents.service import valid_bindings
    assert valid_bindings({"Price": "23.90"}, ["Title"], {}) is None
    assert valid_bindings({"Title": "x", "Price": "23.90"}, ["Title"], {}) is None
    assert valid_bindings({"Title": "x"}, ["Title"], {}) == {"Title": "x"}
    assert valid_bindings({"Title": "x", "A": "Dan Brown"}, ["Title"],
                          {"A": "Dan Brown"}) == {"Title": "x"}
    assert valid_bindings({"Title": "x", "A": "Other"}, ["Title"], {"A": "Dan Brown"}) is None


def test_input_variables_filter_like_literals() -> None:
    engine = Engine()
    engine.register("newBook(title=X)", {"X": "HTML in 21 days"})
    assert engine.signal("newBook", {"title": "Other"}) == []
    [d] = engine.signal("newBook", {"title": "HTML in 21 days"})
    assert d.bindings == {}  # inputs are not outputs


def test_or_notification() -> None:
    """Section 3.3: A = OR(newCD(CDT, "U2"), newBook(BT, "Dan Brown")) registered with id 1."""
    engine = Engine()
    a = engine.register('OR(newCD(title=CDT, artist="U2"), newBook(title=BT, author="Dan Brown"))',
                        ident="1")
    [d] = engine.signal(*cd("Boy", "U2"))
    assert (d.expression, dict(d.bindings), d.next) == (a, {"CDT": "Boy"}, "1")
    assert [(s.type, dict(s.params)) for s in d.events] == [
        ("newCD", {"title": "Boy", "artist": "U2"})]


def test_seq_order() -> None:
    engine = Engine()
    engine.register("SEQ(a, b)")
    assert engine.signal("b") == []  # a right child before any left one is discarded
    assert engine.signal("a") == []
    [d] = engine.signal("b")
    assert [s.type for s in d.events] == ["a", "b"]
    assert len(engine.signal("b")) == 1  # recent context: the initiator stays


@pytest.mark.parametrize(("n", "expected"), [(1, [["a"], ["b"]]), (2, [[], ["a", "b"]]),
                                              (3, [[], ["a", "b"]])])
def test_any_n_of_two(n: int, expected: list[list[str]]) -> None:
    engine = Engine()
    engine.register(f"ANY({n}, a, b)")
    got = [[s.type for d in engine.signal(t) for s in d.events] for t in ("a", "b")]
    assert got == expected


def test_composite_occurrence_time_is_its_last_constituent() -> None:
    engine = Engine()
    engine.register("SEQ(ANY(2, a, b), c)")
    engine.signal("b")
    engine.signal("c")
    engine.signal("a")  # ANY occurs now, after c: no SEQ
    assert engine.signal("x") == []
    [d] = engine.signal("c")
    assert [s.type for s in d.events] == ["b", "a", "c"]


def test_opaque_results_failure_and_next_null() -> None:
    evaluations: list[str] = []

    def provider(request: object) -> str:
        evaluations.append(f"ev{len(evaluations) + 1}")
        return evaluations[-1]

    engine = Engine(providers={"urn:prolog": provider})
    e = engine.register('SEQ(newCD(title=T), OPAQUE("urn:prolog", "?- offer(T, P).", P))')
    engine.signal("newCD", {"title": "Boy"})
    assert engine.report("ev1", {"P": 10, "Q": 1}) == []  # Q: not a variable: invalid
    [d] = engine.report("ev1", {"P": 10})
    assert d.bindings == {"T": "Boy", "P": 10} and d.next == e
    [empty] = engine.fail("ev1", "stream closed")
    assert (empty.expression, empty.events, empty.next) == (e, (), None)
    assert engine.dead() == []  # told once


def test_a_provider_error_marks_the_expression_failed() -> None:
    def broken(request: object) -> str:
        raise ConnectionError("no prolog engine")

    engine = Engine(providers={"urn:prolog": broken})
    e = engine.register('OR(OPAQUE("urn:prolog", "?- x."), newCD(title=T))')
    assert engine.dead() == []  # the OR can still occur through newCD
    [d] = engine.signal("newCD", {"title": "Boy"})
    assert d.next == e
    f = engine.register('SEQ(OPAQUE("urn:prolog", "?- x."), newCD(title=T))')
    [empty] = engine.dead()
    assert (empty.expression, empty.next) == (f, None)


def test_bad_signals_change_nothing() -> None:
    engine = Engine()
    engine.register("a(x=X)")
    for etype, params in [("", {}), (3, {}), ("a", {"x": None}), ("a", {"x": [1]}),
                          ("a", {"x": {"y": 1}}), ("a", [("x", 1)]), ("a", {"x": float("nan")})]:
        with pytest.raises(SignalError):
            engine.signal(etype, params)  # type: ignore[arg-type]
    assert engine.tick == 0


def test_values_keep_their_json_kind() -> None:
    engine = Engine()
    engine.register('a(x="1")')
    engine.register("b(x=1)")
    engine.register("c(x=true)")
    assert engine.signal("a", {"x": 1}) == [] and len(engine.signal("a", {"x": "1"})) == 1
    assert engine.signal("b", {"x": True}) == [] and len(engine.signal("b", {"x": 1.0})) == 1
    assert engine.signal("c", {"x": 1}) == [] and len(engine.signal("c", {"x": True})) == 1


def test_only_matching_definitions_are_examined() -> None:
    engine = Engine()
    for i in range(1000):
        engine.register(f'newCD(title=T, artist="artist {i}")')
    leaf = engine.leaves["newCD"]
    assert len(leaf.candidates({"title": "x", "artist": "artist 7"})) == 1
    [d] = engine.signal("newCD", {"title": "x", "artist": "artist 7"})
    assert d.bindings == {"T": "x"}


def test_deep_expressions_register_and_detect_without_recursion() -> None:
    text = " ; ".join(f"e{i}" for i in range(3000))
    engine = Engine()
    engine.register(parse_expression(text))
    for i in range(2999):
        assert engine.signal(f"e{i}") == []
    assert len(engine.signal("e2999")) == 1
    assert len(str(parse_expression(text))) > 3000


def test_one_signal_at_both_children_of_a_seq_ends_the_older_chain_first() -> None:
    """Terminators first (as the algebra's processTree): the signal pairs with the initiator
    before it, then becomes the new initiator."""
    engine = Engine()
    engine.register("SEQ(a(x=X), a(y=Y))")
    assert engine.signal("a", {"x": 1, "y": 1}) == []  # nothing precedes it
    [d] = engine.signal("a", {"x": 2, "y": 2})
    assert d.bindings == {"X": 1, "Y": 2}
    [d] = engine.signal("a", {"x": 3, "y": 3})
    assert d.bindings == {"X": 2, "Y": 3}


def test_any_counts_one_signal_once() -> None:
    """ANY(n, ...) occurs when n *distinct* events occurred (section 2.2)."""
    engine = Engine()
    engine.register("ANY(2, a(x=X), a(y=Y))")
    assert engine.signal("a", {"x": 1, "y": 1}) == []
    [d] = engine.signal("a", {"x": 2})
    assert d.bindings == {"X": 2, "Y": 1}
