"""Status cards (docs/RULES.md "Status cards"): the deck as data, dealing them, their effects.

Scripted scenarios of the readable engine; the kernel twins are compared in
tests/test_kernel_status.py.
"""

import numpy as np
import pytest

from sim.content import ContentError
from sim.content import constants as K
from sim.rng import STATUS
from sim.rules.choices import Means, Reward
from sim.rules.choices import TestOption as Option
from sim.rules.encounters import apply_effect, gain_random_status, gain_status, lower_any_skill
from sim.rules.game import play_turn
from sim.rules.invariants import check_invariants
from sim.rules.missions import mission_reward, reward_options
from sim.rules.movement import legal_moves
from sim.rules.skill_tests import run_test
from sim.rules.villain import take_injuries
from tests.rules_helpers import (
    DICE,
    clear_table,
    content,
    content_with,
    face,
    install_rng,
    new_game,
    put,
    stack_villain,
    villain_cards,
)

SPY, PER, DEC, ATH, H2H = range(5)
CALLI, ROCKO, DEXTER, NIKA = range(4)


def table(players=4):
    g = clear_table(new_game(players))
    rng = install_rng(g)
    for strat in g.strategies:
        strat.calls.clear()  # set-up's decisions
    return g, rng


def kind(name):
    return content().status_index(name)


def copies(g, name):
    """Card ids of a status kind, ascending."""
    k = kind(name)
    return [x for x in range(g.content.n_status) if g.content.status_type[x] == k]


def held_kinds(g, seat):
    return [g.content.status_ids[g.content.status_type[x]] for x in g.status_of(seat)]


def hand_out(g, name, seat, n=None):
    """Give ``n`` (default all) copies of a kind to ``seat``."""
    for x in copies(g, name)[:n]:
        g.status_holder[x] = seat


# ------------------------------------------------------------------ the deck as data
def test_default_deck_has_48_cards_in_the_effect_vocabulary():
    c = content()
    assert c.n_status == 48
    assert len(c.status_ids) == len(set(c.status_ids))
    assert set(c.status_effect.tolist()) <= set(range(len(K.STATUS_EFFECTS)))
    for name in ("Watch", "9 Lives", "Probed by Aliens", "Revoked", "Cool Agent", "The Small Man", "Corduroy Blu"):
        assert name in c.status_names, name  # the names the rulebooks print
    watch = c.status_index("Watch")
    assert c.status_effect[watch] == K.SE_WATCH and c.status_polarity[watch] == K.POSITIVE
    for k in range(len(c.status_ids)):
        if c.status_polarity[k] == K.THIRD_PERSON:
            assert (c.status_type == k).sum() == 1, "a third person is one card"
    # every kind of effect the vocabulary names is in the default deck, all polarities too
    assert set(c.status_effect.tolist()) == set(range(1, len(K.STATUS_EFFECTS)))
    assert set(c.status_polarity.tolist()) == {K.POSITIVE, K.NEGATIVE, K.THIRD_PERSON}
    assert any("status.toml" in a for a in c.assumed)


def test_a_small_share_of_encounter_sides_deals_status_cards():
    c = content()
    status = {K.E_STATUS, K.E_RANDOM_STATUS, K.E_RANDOM_NEGATIVE_STATUS}
    sides = sum(1 for x in range(c.n_encounters) for s in (0, 1)
                if c.encounter_reward[x, s] in status or c.encounter_penalty[x, s] in status)
    assert sides == 22  # of 216: ~10% (encounters.toml header)
    # a named card's kind sits in the effect's skill column
    named = [(x, s) for x in range(c.n_encounters) for s in (0, 1) if c.encounter_reward[x, s] == K.E_STATUS]
    assert named and all(0 <= c.encounter_reward_skill[x, s] < len(c.status_ids) for x, s in named)


def _bad_pack(patch):
    with pytest.raises(ContentError) as e:
        content_with(patch)
    return e.value


def test_an_unknown_status_card_in_a_reward_is_refused_with_file_and_entry():
    def patch(raw):
        raw["encounters.toml"]["card"][0]["no_intel"]["reward"] = {"effect": "status", "card": "jet_boots"}

    e = _bad_pack(patch)
    assert e.file == "encounters.toml" and e.entry == "card 'africa-01'"
    assert "unknown status card 'jet_boots'" in e.reason


def test_a_status_effect_without_its_card_is_refused():
    def patch(raw):
        raw["encounters.toml"]["card"][0]["no_intel"]["penalty"] = {"effect": "status"}

    e = _bad_pack(patch)
    assert e.file == "encounters.toml" and "needs a named status card" in e.reason


@pytest.mark.parametrize("entry, reason", [
    ({"effect": "skill_modifier", "amount": 1}, "needs a named basic skill"),
    ({"effect": "skill_modifier", "skill": "spycraft", "amount": 0}, "needs an amount"),
    ({"effect": "extra_move", "amount": 2}, "takes no amount"),
    ({"effect": "injury_protection"}, "needs an amount"),
    ({"effect": "teleport"}, "unknown status effect 'teleport'"),
    ({"polarity": "neutral"}, "unknown polarity 'neutral'"),
    ({"polarity": "third_person", "copies": 2}, "copies must be 1"),
])
def test_status_card_entries_are_checked(entry, reason):
    def patch(raw):
        card = {"id": "gadget", "name": "Gadget", "copies": 1, "polarity": "positive", "effect": "none"}
        card.update(entry)
        raw["status.toml"]["status"].append(card)

    e = _bad_pack(patch)
    assert e.file == "status.toml" and reason in e.reason, e


def test_a_duplicate_status_id_and_an_unknown_start_status_are_refused():
    def dup(raw):
        raw["status.toml"]["status"].append(dict(raw["status.toml"]["status"][0]))

    e = _bad_pack(dup)
    assert e.file == "status.toml" and e.entry == "status 'watch'" and "duplicate" in e.reason

    def start(raw):
        raw["characters.toml"]["character"][0]["start_status"] = ["pocket_watch"]

    e = _bad_pack(start)
    assert e.file == "characters.toml" and e.entry == "character 'Calli Dagger'"
    assert "unknown status card 'pocket_watch'" in e.reason


def test_the_old_watch_flag_is_refused_with_its_replacement():
    def old(raw):
        raw["characters.toml"]["character"][2]["watch"] = True

    e = _bad_pack(old)
    assert e.file == "characters.toml" and "start_status" in e.reason, e


# ------------------------------------------------------------------ set-up
def test_dexter_starts_with_the_watch_and_other_characters_with_their_start_status():
    g = new_game(4)
    assert [held_kinds(g, s) for s in range(4)] == [[], [], ["watch"], []]

    def patch(raw):
        raw["characters.toml"]["character"][0]["start_status"] = ["lucky_charm", "revoked"]

    c = content_with(patch)
    g = new_game(4, cont=c)
    assert held_kinds(g, CALLI) == ["lucky_charm", "revoked"]
    # the resolve card acts as it is gained: Calli's 3 - 0 (4 players) + 2, within her maximum 5
    assert g.players[CALLI].resolve == 5
    check_invariants(g)


def test_the_player_view_shows_everyones_status_cards():
    g, _ = table()
    hand_out(g, "revoked", NIKA, 1)
    v = g.view(CALLI)
    assert v.status_cards() == []
    assert v.status_cards(DEXTER) == copies(g, "watch")
    assert v.status_effects(NIKA) == [K.SE_SKILL_MODIFIER]
    assert g.view(NIKA).status_modifier(SPY) == -1 and g.view(NIKA).status_modifier(DEC) == 0


# ------------------------------------------------------------------ dealing
def test_a_named_card_deals_its_lowest_copy_left():
    g, _ = table()
    first, second, third = copies(g, "cool_agent")
    g.status_holder[first] = ROCKO
    apply_effect(g, CALLI, K.E_STATUS, 1, kind("cool_agent"))
    assert g.status_holder[second] == CALLI and g.status_holder[third] == -1
    assert any("takes the status card 'Cool Agent'" in line for line in g.trace)


@pytest.mark.parametrize("top_secret", [True, False])
def test_a_positive_card_with_no_copy_left_gives_a_top_secret_card_or_1_resolve(top_secret):
    g, _ = table()
    hand_out(g, "cool_agent", ROCKO)
    p = g.players[CALLI]
    p.resolve = 1
    g.strategies[CALLI].push("status_top_secret", top_secret)
    gain_status(g, CALLI, kind("cool_agent"))
    assert g.status_of(CALLI) == []
    assert (len(p.top_secret), p.resolve) == ((1, 1) if top_secret else (0, 2))
    assert [d for d, _ in g.strategies[CALLI].calls] == ["status_top_secret"]


@pytest.mark.parametrize("integer", [int, np.int64])  # a numpy integer is the same answer
def test_a_negative_card_with_no_copy_left_lowers_any_skill_of_the_players_choice(integer):
    g, _ = table()
    hand_out(g, "revoked", ROCKO)
    p = g.players[CALLI]
    p.skills = [2, 0, 1, 0, 3]  # persuasion and athletics at the mat's minimum 0
    g.strategies[CALLI].push("skill_down", lambda view, skills: integer(skills.index(H2H)))
    gain_status(g, CALLI, kind("revoked"))
    decision, args = g.strategies[CALLI].calls[-1]
    offered = args[-1]
    assert decision == "skill_down" and offered == [SPY, DEC, H2H]
    assert p.skills == [2, 0, 1, 0, 2] and g.status_of(CALLI) == []


def test_lowering_any_skill_with_every_skill_at_its_minimum_does_nothing():
    g, _ = table()
    g.players[CALLI].skills = [0] * 5
    lower_any_skill(g, CALLI)
    assert g.players[CALLI].skills == [0] * 5
    assert not g.strategies[CALLI].calls


def test_a_third_person_gained_a_second_time_or_held_by_another_gives_nothing():
    g, _ = table()
    (small,) = copies(g, "the_small_man")
    gain_status(g, CALLI, kind("the_small_man"))
    assert g.status_holder[small] == CALLI
    before = (list(g.players[CALLI].skills), g.players[CALLI].resolve, len(g.players[CALLI].top_secret))
    gain_status(g, CALLI, kind("the_small_man"))  # a second time: out of luck
    gain_status(g, ROCKO, kind("the_small_man"))  # Calli has him: nothing for Rocko either
    assert g.status_holder[small] == CALLI and g.status_of(ROCKO) == []
    assert (list(g.players[CALLI].skills), g.players[CALLI].resolve, len(g.players[CALLI].top_secret)) == before
    assert not g.strategies[CALLI].calls and not g.strategies[ROCKO].calls


def test_a_random_status_reward_draws_among_the_cards_left_that_are_not_negative():
    g, rng = table()
    c = g.content
    (small,) = copies(g, "the_small_man")
    g.status_holder[small] = CALLI  # a third person Calli holds is not dealt to her again
    hand_out(g, "cool_agent", ROCKO)
    cands = [x for x in range(c.n_status) if g.status_holder[x] == -1
             and (c.status_polarity[c.status_type[x]] == K.POSITIVE
                  or c.status_polarity[c.status_type[x]] == K.THIRD_PERSON)]
    rng.push(STATUS, (len(cands), 3))
    gain_random_status(g, CALLI, negative=False)
    assert g.status_holder[cands[3]] == CALLI
    assert c.status_polarity[c.status_type[cands[3]]] != K.NEGATIVE


def test_a_random_status_penalty_draws_a_negative_card_and_none_left_lowers_a_skill():
    g, rng = table()
    c = g.content
    negatives = [x for x in range(c.n_status) if c.status_polarity[c.status_type[x]] == K.NEGATIVE]
    rng.push(STATUS, (len(negatives), len(negatives) - 1))
    apply_effect(g, CALLI, K.E_RANDOM_NEGATIVE_STATUS, 1, -1)
    assert g.status_of(CALLI) == [negatives[-1]]
    for x in negatives:
        g.status_holder[x] = ROCKO
    skills = list(g.players[NIKA].skills)
    apply_effect(g, NIKA, K.E_RANDOM_NEGATIVE_STATUS, 1, -1)
    assert sum(g.players[NIKA].skills) == sum(skills) - 1 and g.status_of(NIKA) == []
    assert rng.drawn(STATUS) == [(len(negatives), len(negatives) - 1)]  # no draw from an empty choice


# ------------------------------------------------------------------ effects
def test_a_skill_modifier_changes_the_dice_allowed():
    g, rng = table()
    hand_out(g, "cool_agent", CALLI, 1)  # +1 deception
    hand_out(g, "blown_cover", CALLI, 2)  # -1 deception twice
    seen = []
    g.strategies[CALLI].set_default("draw_die", lambda view, test, drawn: seen.append(test.dice_allowed) and False)
    rng.push(DICE, (6, face("yellow", "-")))
    run_test(g, CALLI, Option(DEC, 1, 1))
    assert seen == [g.players[CALLI].skills[DEC] + 1 + 1 - 2]


def test_an_extra_move_card_adds_one_walking_movement_point():
    g, _ = table()
    put(g, CALLI, "London")
    g.players[CALLI].resolve = 0

    def walks():
        return {g.content.space_names[m.dest] for m in legal_moves(g, CALLI) if m.means == Means.WALK and not m.resolve}

    before = walks()
    hand_out(g, "jetpack", CALLI, 1)
    after = walks()
    assert before < after
    hand_out(g, "sports_car", CALLI, 1)  # a second extra_move card does not stack
    assert walks() == after
    g.players[CALLI].resolve = 1
    paid = {m.steps for m in legal_moves(g, CALLI) if m.means == Means.WALK and m.resolve}
    assert paid <= {K.BASE_MP + K.EXTRA_MP + 1}


def test_injury_protection_cancels_its_amount_of_the_next_hit_then_is_discarded():
    g, _ = table()
    vest, lives = copies(g, "bulletproof_vest")[0], copies(g, "nine_lives")[0]
    g.status_holder[lives] = CALLI
    g.status_holder[vest] = CALLI
    p = g.players[CALLI]
    take_injuries(g, CALLI, 2)  # 9 Lives has the lower id: cancels both
    assert (p.injuries, g.status_holder[lives], g.status_holder[vest]) == (0, -1, CALLI)
    take_injuries(g, CALLI, 2)  # the vest cancels one
    assert (p.injuries, g.status_holder[vest], g.stats.injuries_taken) == (1, -1, 1)


def test_an_injury_card_from_the_villain_deck_is_cancelled_too():
    g, _ = table()
    hand_out(g, "bulletproof_vest", CALLI, 1)
    stack_villain(g, villain_cards(g, injury=True)[0])
    from sim.rules.villain import villain_advancement

    g.active = CALLI
    villain_advancement(g)
    assert g.players[CALLI].injuries == 0 and g.status_of(CALLI) == []


def test_a_resolve_card_acts_once_as_it_is_gained_within_0_and_the_maximum():
    g, _ = table()
    p = g.players[CALLI]
    p.resolve = p.resolve_max - 1
    gain_status(g, CALLI, kind("lucky_charm"))  # +2
    assert p.resolve == p.resolve_max
    p.resolve = 1
    gain_status(g, CALLI, kind("marked_man"))  # -2
    assert p.resolve == 0 and held_kinds(g, CALLI) == ["lucky_charm", "marked_man"]


def test_a_lost_turn_skips_movement_encounter_and_mission_but_not_the_villain_phase():
    g, rng = table()
    (card, _) = copies(g, "probed_by_aliens")
    g.status_holder[card] = CALLI
    g.players[CALLI].mission_flipped = [True, True]
    space = g.players[CALLI].space
    play_turn(g, CALLI)
    assert g.status_holder[card] == -1 and g.players[CALLI].space == space
    assert g.stats.villain_drawn == 1 and g.turn == 1 and g.stats.tests_attempted == 0
    assert g.stats.missions_completed == 0 and g.players[CALLI].mission_flipped == [True, True]
    assert not g.strategies[CALLI].calls  # nothing to decide
    assert any("loses this turn" in line for line in g.trace)


def test_the_watch_works_as_a_status_card_for_anyone_who_holds_it():
    g, rng = table()
    (watch,) = copies(g, "watch")
    g.status_holder[watch] = NIKA
    minus = villain_cards(g, advance=-1)[0]
    stack_villain(g, minus)
    g.strategies[NIKA].push("use_watch", True)
    from sim.rules.game import start_of_turn

    g.active = NIKA
    start_of_turn(g, NIKA)
    assert g.watched == minus and g.view(NIKA).watched_advance == -1


# ------------------------------------------------------------------ secret missions
def test_a_secret_mission_may_discard_a_negative_status_card():
    g, _ = table()
    hand_out(g, "revoked", CALLI, 2)
    hand_out(g, "detained", CALLI, 1)
    hand_out(g, "cool_agent", CALLI, 1)
    options = reward_options(g, CALLI)
    discard = [o for o in options if o.kind == Reward.DISCARD_STATUS]
    assert [g.content.status_ids[o.card] for o in discard] == ["detained", "revoked"]  # one per negative kind
    p = g.players[CALLI]
    p.mission_flipped = [True, True]
    g.strategies[CALLI].push("mission_reward", lambda view, opts: next(
        i for i, o in enumerate(opts) if o.kind == Reward.DISCARD_STATUS and o.card == kind("revoked")))
    mission_reward(g, CALLI)
    assert held_kinds(g, CALLI) == ["cool_agent", "detained", "revoked"]  # the lowest Revoked went back
    assert g.status_holder[copies(g, "revoked")[0]] == -1
    check_invariants(g)


def test_the_heuristic_discards_a_lasting_negative_card_first():
    import strategies

    g, _ = table()
    hand_out(g, "shaken", CALLI, 1)  # a resolve card: its effect is spent
    h = strategies.make("heuristic")
    opts = reward_options(g, CALLI)
    assert opts[h.mission_reward(g.view(CALLI), opts)].kind != Reward.DISCARD_STATUS
    hand_out(g, "revoked", CALLI, 1)
    opts = reward_options(g, CALLI)
    pick = opts[h.mission_reward(g.view(CALLI), opts)]
    assert pick.kind == Reward.DISCARD_STATUS and pick.card == kind("revoked")


def test_rewards_and_penalties_of_an_encounter_card_deal_status_cards():
    g, rng = table()
    c = g.content
    card = next(x for x in range(c.n_encounters) if c.encounter_penalty[x, 0] == K.E_STATUS)
    k = int(c.encounter_penalty_skill[card, 0])
    apply_effect(g, CALLI, int(c.encounter_penalty[card, 0]), int(c.encounter_penalty_amount[card, 0]), k)
    assert [int(c.status_type[x]) for x in g.status_of(CALLI)] == [k]
    assert f"  status card: {c.status_names[k]!r}" in g.trace


# ------------------------------------------------------------------ readings
def test_reading_a_negative_card_with_no_copy_left_as_the_general_rule_gives_a_choice():
    c = content_with(lambda raw: raw["status.toml"]["readings"].update(unavailable_negative="top_secret_or_resolve"))
    g = clear_table(new_game(4, cont=c))
    install_rng(g)
    hand_out(g, "revoked", ROCKO)
    skills = list(g.players[CALLI].skills)
    g.strategies[CALLI].push("status_top_secret", False)
    resolve = g.players[CALLI].resolve
    gain_status(g, CALLI, kind("revoked"))
    assert g.players[CALLI].skills == skills and g.players[CALLI].resolve == min(resolve + 1, g.players[CALLI].resolve_max)


def test_reading_discarded_cards_removed_keeps_them_out_of_the_deck():
    c = content_with(lambda raw: raw["status.toml"]["readings"].update(discarded="removed"))
    g = clear_table(new_game(4, cont=c))
    install_rng(g)
    (vest, _) = copies(g, "bulletproof_vest")
    g.status_holder[vest] = CALLI
    take_injuries(g, CALLI, 1)
    assert g.status_holder[vest] == K.STATUS_REMOVED
    check_invariants(g)
    gain_status(g, ROCKO, kind("bulletproof_vest"))  # the other copy
    g.strategies[NIKA].push("status_top_secret", True)
    gain_status(g, NIKA, kind("bulletproof_vest"))  # none left: the removed one is not dealt again
    assert g.status_holder[vest] == K.STATUS_REMOVED and len(g.players[NIKA].top_secret) == 1


def test_an_unknown_status_reading_is_refused():
    e = _bad_pack(lambda raw: raw["status.toml"]["readings"].update(discarded="shredded"))
    assert e.file == "status.toml" and "unknown discarded reading 'shredded'" in e.reason
