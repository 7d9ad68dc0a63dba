"""Set-up by player count and the variants (field manual p.3, p.12; MODEL.md A 'Setup')."""

import pytest

from sim.content import constants as K
from sim.rules.errors import StrategyError
from sim.rules.state import SUPPLY, Settings
from tests.rules_helpers import FATE, Scripted, content, content_with, new_game, sp

CALLI, ROCKO, DEXTER, NIKA, FIVE = range(5)


def test_character_indices_match_the_pack():
    c = content()
    names = ["Calli Dagger", "Rocko Jurgen", "Dexter Kane", "Nika Shizuka", "Agent Five"]
    assert [c.character_index(n) for n in names] == [CALLI, ROCKO, DEXTER, NIKA, FIVE]


@pytest.mark.parametrize("players, expected", [(1, 3), (2, 2), (3, 0), (4, 0), (5, 0), (6, 0)])
def test_board_intel_by_player_count(players, expected):
    g = new_game(players, seed=5)
    c = g.content
    on_board = g.yellow_on_board()
    assert len(on_board) == expected
    # each token lies on the city of a Fate card drawn (and discarded) for it
    assert sorted(g.intel_loc[t] for t in on_board) == sorted(int(c.fate_city[f]) for f in g.fate.discard)
    assert all(c.space_kind[g.intel_loc[t]] == K.CITY for t in on_board)
    assert not g.green_on_board()


@pytest.mark.parametrize(
    "players, target, overflow", [(1, 3, 5), (2, 4, 5), (3, 5, 5), (4, 5, 4), (5, 5, 4), (6, 5, 4)]
)
def test_location_target_and_overflow_limit_by_player_count(players, target, overflow):
    g = new_game(players)
    assert g.location_target == target
    assert g.overflow_limit == overflow
    assert g.lobo == 0 and g.location_track == 0


def test_two_players_get_two_extra_un_and_calli_one_un_one_top_secret():
    g = new_game(2, [CALLI, ROCKO])
    calli, rocko = g.players
    # Calli: her own starting UN Transport + 1 UN + 1 Top Secret
    assert (calli.un_tokens, len(calli.top_secret)) == (2, 1)
    assert (rocko.un_tokens, len(rocko.top_secret)) == (2, 0)
    g = new_game(2, [DEXTER, NIKA])
    assert [(p.un_tokens, len(p.top_secret)) for p in g.players] == [(2, 0), (2, 0)]
    assert g.un_supply == g.content.n_un_transport - 4


@pytest.mark.parametrize("un", [0, 1, 2, 3])
def test_solo_extras_three_combined(un):
    s = Scripted().push("setup_extras", un)
    g = new_game(1, [NIKA], strategies=[s])
    assert s.asked("setup_extras") == [(3, 3)]
    p = g.players[0]
    assert (p.un_tokens, len(p.top_secret)) == (un, 3 - un)


@pytest.mark.parametrize("un", [0, 1])
def test_solo_calli_takes_at_most_one_extra_un(un):
    s = Scripted().push("setup_extras", un)
    g = new_game(1, [CALLI], strategies=[s])
    assert s.asked("setup_extras") == [(3, 1)]
    p = g.players[0]
    # plus her own starting UN Transport
    assert (p.un_tokens, len(p.top_secret)) == (1 + un, 3 - un)


def test_solo_calli_cannot_take_two_extra_un():
    s = Scripted().push("setup_extras", 2)
    with pytest.raises(StrategyError):
        new_game(1, [CALLI], strategies=[s])


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_three_plus_players_get_no_extras(players):
    strats = [Scripted() for _ in range(players)]
    g = new_game(players, strategies=strats)
    assert all(not s.asked("setup_extras") for s in strats)
    for p in g.players:
        assert len(p.top_secret) == 0
        assert p.un_tokens == int(g.content.character_start_un[p.character])


@pytest.mark.parametrize("players, k", [(1, 2), (2, 1), (3, 0), (4, 0), (5, 0), (6, 0)])
def test_henchmen_at_level_two(players, k):
    strats = [Scripted() for _ in range(players)]
    chosen = [3, 1][:k]
    strats[0].push("setup_level2_henchmen", chosen)
    g = new_game(players, strategies=strats)
    expected = [2 if h in chosen else 1 for h in range(4)]
    assert g.henchman_level == expected
    assert strats[0].asked("setup_level2_henchmen") == ([(k,)] if k else [])


def test_henchman_choice_is_validated():
    s = Scripted().push("setup_level2_henchmen", [2, 2])
    with pytest.raises(StrategyError):
        new_game(1, strategies=[s])


def _counts(c, cards):
    inj = sum(1 for x in cards if c.villain_injury[x])
    minus = sum(1 for x in cards if not c.villain_injury[x] and c.villain_advance[x] == -1)
    plus1 = sum(1 for x in cards if not c.villain_injury[x] and c.villain_advance[x] == 1)
    plus2 = sum(1 for x in cards if not c.villain_injury[x] and c.villain_advance[x] == 2)
    return inj, minus, plus1, plus2


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
def test_villain_cards_removed_by_player_count(players):
    g = new_game(players, seed=9)
    c = g.content
    all_inj, all_minus, all_plus1, all_plus2 = _counts(c, range(c.n_villain))
    assert (all_inj, all_minus, all_plus1, all_plus2) == (3, 2, 14, 16)
    removed = _counts(c, g.villain_removed)
    kept = _counts(c, g.villain.pile)
    if players == 1:
        assert removed == (3, 2, 3, 0)
    elif players == 2:
        assert removed == (3, 2, 0, 0)
    else:
        assert removed == (0, 0, 0, 0)
    assert [a + b for a, b in zip(removed, kept)] == [all_inj, all_minus, all_plus1, all_plus2]
    assert sorted(g.villain.pile + g.villain_removed) == list(range(c.n_villain))


def test_solo_removes_random_plus_one_cards():
    c = content()
    seen = set()
    for seed in range(8):
        g = new_game(1, seed=seed)
        seen.add(tuple(x for x in g.villain_removed if c.villain_advance[x] == 1 and not c.villain_injury[x]))
    assert len(seen) > 1  # which +1 cards go is random


@pytest.mark.parametrize(
    "players, lineup, cuts",
    [
        (4, [CALLI, ROCKO, DEXTER, NIKA], [0, 0, 0, 0]),
        (5, [CALLI, ROCKO, DEXTER, NIKA, FIVE], [1, 0, 1, 1, 1]),
        (6, [CALLI, ROCKO, DEXTER, NIKA, FIVE, CALLI], [2, 1, 2, 2, 2, 2]),
    ],
)
def test_five_and_six_player_resolve_cuts(players, lineup, cuts):
    g = new_game(players, lineup)
    c = g.content
    for p, cut in zip(g.players, cuts):
        assert p.resolve == max(0, int(c.character_resolve_start[p.character]) - cut)
    assert g.players[1].resolve == (2 if players < 5 else {5: 2, 6: 1}[players])  # Rocko starts at 2


def test_six_player_default_lineup_repeats_the_first_character():
    g = new_game(6)
    assert [p.character for p in g.players] == [CALLI, ROCKO, DEXTER, NIKA, FIVE, CALLI]


def test_secret_missions_are_two_distinct_fate_cards_each():
    g = new_game(3, seed=2)
    c = g.content
    held = [m for p in g.players for m in p.missions]
    assert len(held) == 6 and len(set(held)) == 6
    assert not set(held) & set(g.fate.pile)
    for p in g.players:
        assert p.mission_flipped == [False, False]
        assert len({int(c.fate_city[f]) for f in p.missions}) == 2


def test_secret_missions_dealt_from_the_fate_deck_in_seat_order(monkeypatch):
    """With Fate draws forced to the pile's end: seats 0, 1 get two cards each, then board Intel."""
    from sim.rules import setup as setup_mod

    calls = []

    class Stub:
        def below(self, n, source):
            calls.append((n, source))
            return n - 1 if source == FATE else 0

    monkeypatch.setattr(setup_mod, "Streams", lambda seed, game: Stub())
    g = new_game(2, [DEXTER, NIKA], seed=2)
    c = g.content
    assert g.players[0].missions == [43, 42]
    assert g.players[1].missions == [41, 40]
    assert sorted(g.fate.discard) == [38, 39]
    assert sorted(g.intel_loc[t] for t in g.yellow_on_board()) == sorted(int(c.fate_city[f]) for f in (38, 39))
    assert [n for n, s in calls if s == FATE] == [44, 43, 42, 41, 40, 39]


def test_starting_spaces():
    g = new_game(5)
    names = [g.content.space_names[p.space] for p in g.players]
    assert names == ["London", "Siberia", "New York", "Japan", "Congo"]
    assert [g.content.space_kind[p.space] for p in g.players] == [
        K.CITY, K.REGIONAL, K.CITY, K.REGIONAL, K.REGIONAL,
    ]


def test_dexter_starts_with_the_watch_and_calli_gives_un():
    g = new_game(4)
    watch = g.content.status_index("watch")
    assert [[int(g.content.status_type[x]) for x in g.status_of(p.seat)] for p in g.players] == [[], [], [watch], []]
    assert [p.gives_un for p in g.players] == [True, False, False, False]
    assert g.players[0].un_tokens == 1


@pytest.mark.parametrize("players", [3, 4])
def test_easier_three_four_players_one_top_secret_or_un_each(players):
    strats = [Scripted() for _ in range(players)]
    strats[0].push("setup_extras", 1)  # Calli takes a UN Transport
    g = new_game(players, variant="easier", strategies=strats)
    for s in strats:
        assert s.asked("setup_extras") == [(1, 1)]
    calli = g.players[0]
    assert (calli.un_tokens, len(calli.top_secret)) == (2, 0)
    for p in g.players[1:]:
        assert (p.un_tokens, len(p.top_secret)) == (0, 1)


def test_easier_two_players_one_top_secret_each():
    g = new_game(2, [CALLI, ROCKO], variant="easier")
    calli, rocko = g.players
    assert (calli.un_tokens, len(calli.top_secret)) == (2, 2)
    assert (rocko.un_tokens, len(rocko.top_secret)) == (2, 1)


def test_easier_solo_all_henchmen_level_one():
    s = Scripted()
    g = new_game(1, variant="easier", strategies=[s])
    assert g.henchman_level == [1, 1, 1, 1]
    assert not s.asked("setup_level2_henchmen")


@pytest.mark.parametrize("players", [5, 6])
def test_five_and_six_players_play_the_four_player_easier_variant(players):
    """5 Player Variant: "All other rules are the same as if you are playing a 4-player game"."""
    strats = [Scripted() for _ in range(players)]
    strats[1].push("setup_extras", 1)  # Rocko takes a UN Transport
    g = new_game(players, variant="easier", strategies=strats)
    for s in strats:
        assert s.asked("setup_extras") == [(1, 1)]
    assert [(p.un_tokens, len(p.top_secret)) for p in g.players[:3]] == [(1, 1), (1, 0), (0, 1)]
    plain = new_game(players)
    assert all(len(p.top_secret) == 0 for p in plain.players)


@pytest.mark.parametrize("players", [5, 6])
def test_five_and_six_player_rows_copy_the_four_player_row(players):
    """Every set-up number of rows 5 and 6 equals row 4, apart from the Resolve cuts and the line-up."""
    c = content()
    names = [f for f in dir(c) if (f.startswith("setup_") or f.startswith("easier_"))
             and f not in ("setup_resolve_cut", "setup_resolve_cut_reduced", "setup_lineup")]
    assert len(names) > 10
    for f in names:
        arr = getattr(c, f)
        assert arr[players].tolist() == arr[4].tolist(), f


@pytest.mark.parametrize(
    "variant, lobo, delta",
    [(None, 0, 0), ("dirty-lobo", 2, 0), ("dirty-location", 0, 1), ("dirty", 2, 1),
     ("dirty-lobo,dirty-location", 2, 1)],
)
@pytest.mark.parametrize("players, target", [(1, 3), (3, 5)])
def test_dirty_intel_variants(variant, lobo, delta, players, target):
    g = new_game(players, variant=variant)
    assert g.lobo == lobo
    assert g.lobo_start == lobo and g.next_to_lobo == []
    assert g.location_target == target + delta


def test_settings_reject_bad_input():
    c = content()
    with pytest.raises(ValueError):
        Settings.build(c, 7)
    with pytest.raises(ValueError):
        Settings.build(c, 2, ["Calli Dagger"])
    with pytest.raises(ValueError):
        Settings.build(c, 2, variant="harder")


def test_setup_leaves_everything_else_in_supply():
    g = new_game(4)
    assert all(loc == SUPPLY for loc in g.green_loc)
    assert all(loc == SUPPLY for loc in g.intel_loc)
    assert not any(g.airport_closed)
    assert g.players[0].space == sp("London")


def _un_pack(un_supply, **rows):
    """The default pack with ``un_supply`` UN Transport tokens and set-up rows patched
    (``p2={"extra_choice": 1}``); the 2-player row's fixed extra UN Transports are dropped
    unless patched, so that a small supply still loads."""
    rows = {"p2": {"extra_un": 0, "giver_extra_un": 0}} | rows

    def patch(raw):
        raw["intel.toml"]["components"]["un_transport"] = un_supply
        for key, fields in rows.items():
            raw["setup.toml"]["player_count"][int(key[1:]) - 1].update(fields)

    return content_with(patch)


def test_a_choice_of_extras_offers_no_more_un_transports_than_the_supply_holds():
    """A UN Transport the supply lacks is no choice: the item would be lost (a gain from an empty
    supply gives nothing), so the strategy is offered at most what is left."""
    c = _un_pack(2)
    s = Scripted().push("setup_extras", 2)
    g = new_game(1, [NIKA], strategies=[s], cont=c)
    assert s.asked("setup_extras") == [(3, 2)]
    p = g.players[0]
    assert (p.un_tokens, len(p.top_secret), g.un_supply) == (2, 1, 0)
    with pytest.raises(StrategyError, match=r"took 3 UN Transports of 3 \(max 2\)"):
        new_game(1, [NIKA], strategies=[Scripted().push("setup_extras", 3)], cont=c)


def test_a_choice_counts_the_fixed_extras_the_seat_is_about_to_take():
    # 2 players: 2 fixed extra UN Transports each, here with a choice of 1 besides; 4 in the supply
    strats = [Scripted().push("setup_extras", 0), Scripted().push("setup_extras", 0)]
    g = new_game(2, [DEXTER, NIKA], strategies=strats, cont=_un_pack(4, p2={"extra_choice": 1}))
    assert strats[0].asked("setup_extras") == [(1, 1)]  # 4 less its own 2
    assert strats[1].asked("setup_extras") == [(1, 0)]  # 2 left, both its own
    assert [p.un_tokens for p in g.players] == [2, 2] and g.un_supply == 0


def test_the_easier_choice_counts_the_un_transports_chosen_before_it():
    # 3 players, easier game: a choice of 1 (patched in) and the easier game's choice of 1; 2 in the
    # supply, of which Calli's own starting token takes one first
    strats = [Scripted().push("setup_extras", 1).push("setup_extras", 0)] + [Scripted() for _ in range(2)]
    g = new_game(3, [CALLI, NIKA, ROCKO], "easier", strategies=strats, cont=_un_pack(2, p3={"extra_choice": 1}))
    assert strats[0].asked("setup_extras") == [(1, 1), (1, 0)]
    assert strats[1].asked("setup_extras") == [(1, 0), (1, 0)]
    assert [p.un_tokens for p in g.players] == [2, 0, 0]
    assert [len(p.top_secret) for p in g.players] == [1, 2, 2]


def test_both_engines_cap_the_choice_at_the_supply():
    import sim

    c = _un_pack(2)
    frames = [sim.simulate(1, 300, "random", seed=3, characters=["Nika Shizuka"], content=c, engine=e)
              for e in ("reference", "kernel")]
    assert frames[0].equals(frames[1])
