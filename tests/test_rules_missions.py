"""Secret missions, Top Secret cards, Dexter's Watch and Calli's UN Transports.

Field manual "2 Encounters" (Secret Mission), "3 Villain phase" (reward), "Villain
Advancement" (Watch); MODEL.md A.2, A.4, C (Top Secret deck, characters).
"""

import pytest

from sim.content import constants as K
from sim.rules.choices import Means, MissionReward, Reward
from sim.rules.choices import TestOption as Option
from sim.rules.encounters import encounter_phase, henchman_encounter
from sim.rules.game import play_turn, start_of_turn
from sim.rules.invariants import check_invariants
from sim.rules.missions import flip_missions, mission_reward, reward_options
from sim.rules.movement import movement_phase
from sim.rules.skill_tests import run_test
from sim.rules.state import POOL, SUPPLY
from sim.rules.villain import villain_advancement, villain_phase
from tests.rules_helpers import (
    DICE,
    clear_table,
    face,
    give_top_secret,
    install_rng,
    new_game,
    pick_move,
    put,
    put_green,
    script_dice,
    stack_villain,
    villain_cards,
)
from tests.rules_helpers import Scripted as ScriptedStrategy

SPY, PER, DEC, ATH, H2H = range(5)
CALLI, ROCKO, DEXTER, NIKA, FIVE = range(5)


def table(players=4, characters=None):
    g = clear_table(new_game(players, characters))
    rng = install_rng(g)
    return g, rng


def mission_city(g, seat, i):
    return int(g.content.fate_city[g.players[seat].missions[i]])


# ------------------------------------------------------------------ secret missions
def test_mission_card_flips_on_its_city():
    g, _ = table()
    put(g, 0, mission_city(g, 0, 1))
    flip_missions(g, 0)
    assert g.players[0].mission_flipped == [False, True]
    put(g, 0, mission_city(g, 0, 0))
    flip_missions(g, 0)
    assert g.players[0].mission_flipped == [True, True]


def test_mission_flips_in_the_encounter_phase_even_on_a_failed_henchman_test():
    g, rng = table()
    city = mission_city(g, 0, 0)
    put(g, 0, city)
    put_green(g, "Fedor", city)
    g.strategies[0].push("token", 1)  # the henchman
    g.strategies[0].set_default("draw_die", False)
    rng.push(DICE, (6, face("yellow", "-")))
    stack_villain(g, villain_cards(g, advance=1)[0])
    encounter_phase(g, 0)
    assert g.players[0].mission_flipped == [True, False]
    assert g.lobo == 1


def test_no_flip_elsewhere_or_for_another_players_mission():
    g, _ = table()
    mine = {mission_city(g, 0, 0), mission_city(g, 0, 1)}
    other = next(m for i in (0, 1) if (m := mission_city(g, 1, i)) not in mine)
    put(g, 0, other)
    put(g, 1, other)
    flip_missions(g, 0)
    assert g.players[0].mission_flipped == [False, False]
    assert g.players[1].mission_flipped == [False, False]  # only the active player's cards flip


def test_no_reward_with_one_mission_flipped():
    g, _ = table()
    g.players[0].mission_flipped = [True, False]
    missions = list(g.players[0].missions)
    mission_reward(g, 0)
    assert not g.strategies[0].asked("mission_reward")
    assert g.players[0].missions == missions


@pytest.mark.parametrize(
    "reward", [MissionReward(Reward.TOP_SECRET), MissionReward(Reward.RESOLVE),
               MissionReward(Reward.UN_TRANSPORT), MissionReward(Reward.SKILL, ATH)]
)
def test_mission_rewards_and_new_missions(reward):
    g, _ = table()
    p = g.players[0]
    p.resolve = 2
    old = list(p.missions)
    p.mission_flipped = [True, True]
    before = (len(p.top_secret), p.resolve, p.un_tokens, list(p.skills))
    g.strategies[0].push("mission_reward", lambda view, options: options.index(reward))
    mission_reward(g, 0)
    after = (len(p.top_secret), p.resolve, p.un_tokens, list(p.skills))
    expected = list(before)
    if reward.kind == Reward.TOP_SECRET:
        expected[0] += 1
    elif reward.kind == Reward.RESOLVE:
        expected[1] += 1
    elif reward.kind == Reward.UN_TRANSPORT:
        expected[2] += 1
    else:
        expected[3] = [x + (1 if i == ATH else 0) for i, x in enumerate(before[3])]
    assert after == tuple(expected)
    # two new mission cards; the old ones are discarded
    assert p.mission_flipped == [False, False]
    assert len(p.missions) == 2 and not set(p.missions) & set(old)
    assert set(old) <= set(g.fate.discard)
    assert g.stats.missions_completed == 1
    check_invariants(g)


def test_reward_options_exclude_what_cannot_grow():
    g, _ = table()
    p = g.players[0]
    p.resolve = p.resolve_max
    p.skills = [5, 5, 2, 5, 5]
    g.un_supply, p.un_tokens = 0, p.un_tokens + g.un_supply
    options = reward_options(g, 0)
    assert options == [MissionReward(Reward.TOP_SECRET), MissionReward(Reward.SKILL, DEC)]


def test_all_four_reward_kinds_offered():
    g, _ = table()
    g.players[0].resolve = 1
    kinds = {o.kind for o in reward_options(g, 0)}
    assert kinds == {Reward.TOP_SECRET, Reward.RESOLVE, Reward.UN_TRANSPORT, Reward.SKILL}
    assert len(reward_options(g, 0)) == 3 + 5


@pytest.mark.parametrize("players, gain", [(1, 2), (2, 1), (4, 1)])
def test_solo_mission_resolve_reward_is_two(players, gain):
    g, _ = table(players)
    p = g.players[0]
    p.resolve = 0
    p.mission_flipped = [True, True]
    g.strategies[0].push("mission_reward", lambda view, options: options.index(MissionReward(Reward.RESOLVE)))
    mission_reward(g, 0)
    assert p.resolve == gain


def test_reward_claimed_at_the_end_of_the_turn_that_flips_the_second_mission():
    g, rng = table()
    p = g.players[0]
    p.mission_flipped = [True, False]
    target = mission_city(g, 0, 1)
    s = g.strategies[0]
    s.push("move", lambda view, moves: next(i for i, m in enumerate(moves) if m.dest == target))
    s.set_default("draw_die", False)
    rng.policies[DICE] = lambda n: face("yellow", "-")  # fail the encounter: the mission still counts
    g.players[0].un_tokens, g.un_supply = 1, g.un_supply - 1  # so any city is reachable
    s.push("mission_reward", lambda view, options: options.index(MissionReward(Reward.TOP_SECRET)))
    old = list(p.missions)
    villain_before = g.stats.villain_drawn
    play_turn(g, 0)
    assert p.space == target
    assert len(s.asked("mission_reward")) == 1
    assert g.stats.villain_drawn > villain_before  # the villain phase came first
    assert len(p.top_secret) == 1 and not set(p.missions) & set(old)


def test_resting_on_a_mission_city_does_not_flip_it():
    g, _ = table()
    p = g.players[0]
    put(g, 0, mission_city(g, 0, 0))
    p.injuries = 2
    g.strategies[0].push("rest", True)
    play_turn(g, 0)
    assert p.mission_flipped == [False, False]


# ------------------------------------------------------------------ Top Secret cards
def test_top_secret_auto_pass_on_an_encounter_test():
    g, rng = table()
    card = give_top_secret(g, 0, K.TS_AUTO_PASS)
    s = g.strategies[0]
    s.push("play_auto_pass", True)
    assert run_test(g, 0, Option(ATH, -2, 2)) is True
    assert rng.drawn(DICE) == [] and not s.asked("draw_die")
    assert card in g.top_secret.discard and g.players[0].top_secret == []
    assert g.stats.top_secret_played == 1


@pytest.mark.parametrize("level, offered", [(1, True), (2, True), (3, False)])
def test_top_secret_auto_pass_not_on_a_level_three_henchman(level, offered):
    g, rng = table()
    put(g, 0, "Paris")
    h = put_green(g, "Pierre", "Paris")  # no auto-pass skill for Calli
    g.henchman_level[h] = level
    give_top_secret(g, 0, K.TS_AUTO_PASS)
    s = g.strategies[0]
    s.set_default("play_auto_pass", True)
    s.set_default("draw_die", False)
    rng.push(DICE, (6, face("yellow", "-")))
    stack_villain(g, villain_cards(g, advance=1)[0])
    henchman_encounter(g, 0, h)
    assert bool(s.asked("play_auto_pass")) is offered
    if offered:
        assert g.henchman_level[h] == level + 1 and g.location_track == 1
    else:
        assert g.henchman_level[h] == 3 and len(g.players[0].top_secret) == 1


def test_top_secret_two_dice():
    g, rng = table()
    give_top_secret(g, 0, K.TS_TWO_DICE)
    s = g.strategies[0]
    s.push("play_two_dice", True)
    script_dice(rng, ["red", "blue", "brown", "black"], ["-", "-", "-", "S"], "-")
    assert run_test(g, 0, Option(SPY, 0, 1)) is True  # Spycraft 2 + 2 = 4 dice
    assert s.asked("draw_die")[0][0].dice_allowed == 4
    assert len(s.asked("draw_die")) == 4


def test_top_secret_two_dice_on_a_level_three_henchman():
    g, rng = table()
    put(g, 0, "Paris")
    h = put_green(g, "Pierre", "Paris")
    g.henchman_level[h] = 3
    give_top_secret(g, 0, K.TS_TWO_DICE)
    s = g.strategies[0]
    s.push("play_two_dice", True)
    # Pierre level 3, option 0: Spycraft -1 [1]; Calli Spycraft 2 -> 1 + 2 = 3 dice
    script_dice(rng, ["red", "blue", "brown"], ["S", "-", "-"], "-")
    henchman_encounter(g, 0, h)
    assert s.asked("draw_die")[0][0].dice_allowed == 3
    assert g.henchman_level[h] == 4 and g.location_track == 1


def test_top_secret_heal_all_at_the_start_of_the_turn():
    g, _ = table()
    p = g.players[0]
    card = give_top_secret(g, 0, K.TS_HEAL_ALL)
    s = g.strategies[0]
    start_of_turn(g, 0)
    assert not s.asked("heal_all")  # no injuries: not offered
    p.injuries = 3
    s.push("heal_all", True)
    start_of_turn(g, 0)
    assert p.injuries == 0 and card in g.top_secret.discard


def test_top_secret_intel_to_pool():
    g, _ = table()
    card = give_top_secret(g, 0, K.TS_INTEL_TO_POOL)
    s = g.strategies[0]
    s.push("intel_to_pool", True)
    start_of_turn(g, 0)
    assert len(g.intel_in(POOL)) == 1 and card in g.top_secret.discard
    # with an empty supply it is not offered
    card = give_top_secret(g, 0, K.TS_INTEL_TO_POOL)
    for t, loc in enumerate(g.intel_loc):
        if loc == SUPPLY:
            g.intel_loc[t] = POOL
    start_of_turn(g, 0)
    assert len(s.asked("intel_to_pool")) == 1 and g.players[0].top_secret == [card]


def test_top_secret_cancel_advance_on_a_failed_test():
    g, rng = table()
    give_top_secret(g, 0, K.TS_CANCEL_ADVANCE)
    g.active = 0
    plus2 = villain_cards(g, advance=2)[0]
    stack_villain(g, plus2)
    g.strategies[0].push("cancel_advance", True)
    villain_advancement(g)
    assert g.lobo == 0 and g.stats.top_secret_played == 1


def test_top_secret_un_transport_is_a_move():
    g, _ = table()
    put(g, 0, "Paris")
    give_top_secret(g, 0, K.TS_UN_TRANSPORT)
    g.strategies[0].push("move", pick_move("Santiago", Means.TOP_SECRET_UN))
    movement_phase(g, 0)
    assert g.players[0].space == g.content.space_index("Santiago")
    assert g.players[0].top_secret == []


def test_top_secret_deck_composition():
    c = new_game(1).content
    counts = [sum(1 for e in c.top_secret_effect if e == k) for k in range(len(K.TOP_SECRET_EFFECTS))]
    assert counts == [6, 4, 4, 3, 3, 2]


# ------------------------------------------------------------------ the Watch
def test_dexters_watch_reveals_the_next_villain_card():
    g, rng = table()
    assert g.view(DEXTER).status_effects() == [K.SE_WATCH] and g.view(0).status_effects() == []
    minus = villain_cards(g, advance=-1)[0]
    stack_villain(g, minus)
    g.strategies[DEXTER].push("use_watch", True)
    g.active = DEXTER
    start_of_turn(g, DEXTER)
    assert g.watched == minus and g.villain.top == minus
    assert g.view(DEXTER).watched_advance == -1
    # the revealed card is the next one drawn, here as an advancement
    g.villain.pile.reverse()  # whatever the pile order, the revealed card comes first
    villain_advancement(g)
    assert g.next_to_lobo == [minus] and g.lobo == -1
    assert g.villain.top == -1


def test_watched_card_is_the_next_end_of_turn_card():
    g, rng = table()
    card = villain_cards(g, advance=2)[0]
    stack_villain(g, card)
    g.strategies[DEXTER].push("use_watch", True)
    start_of_turn(g, DEXTER)
    g.villain.pile.reverse()
    villain_phase(g, 1)
    assert g.villain.discard == [card] and g.lobo == 0


def test_only_the_watch_holder_is_asked():
    g, _ = table()
    for seat in range(4):
        start_of_turn(g, seat)
    assert [bool(s.asked("use_watch")) for s in g.strategies] == [False, False, True, False]


def test_watch_once_per_turn_in_play():
    g, rng = table()
    put(g, DEXTER, "Paris")
    s = g.strategies[DEXTER]
    s.set_default("use_watch", True)
    s.set_default("draw_die", False)
    rng.policies[DICE] = lambda n: face("yellow", "S")
    play_turn(g, DEXTER)
    assert len(s.asked("use_watch")) == 1
    assert g.watched >= 0 and g.villain.discard[-1] == g.watched


# ------------------------------------------------------------------ Calli
def test_calli_gives_un_in_a_turn():
    g, _ = table(2, [CALLI, ROCKO])
    g.players[0].un_tokens, g.un_supply = 1, g.un_supply - 1
    put(g, 1, "Paris")
    g.strategies[1].push("move", pick_move("Lima", Means.UN_GIFT))
    movement_phase(g, 1)
    assert g.players[1].space == g.content.space_index("Lima")
    assert g.players[0].un_tokens == 0


def test_scripted_strategy_is_a_strategy():
    from strategies.base import Strategy

    assert isinstance(ScriptedStrategy(), Strategy)
