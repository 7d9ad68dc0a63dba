"""Advanced skills at set-up and as rewards, and the limited advanced-skill tokens.

Field Manual, Game Set-up step 2 ("Each character starts with 2 Advanced Skills ... Players
pick Advanced Skills"); Reference Manual, 3 Setup ("Select 2 Advanced Skills"); Appendix
("Take the named Advanced Skill, if available"): 44 tokens, 4 of each skill.
"""

import numpy as np
import pytest
from numba import njit

import sim
import strategies
from sim.content import constants as K
from sim.kernel import strategy as KS
from sim.kernel.custom import KernelStrategy
from sim.rules.encounters import advanced_available, apply_effect
from sim.rules.invariants import check_invariants
from sim.rules.skill_tests import autopass_encounter_counts, autopass_level1_counts
from sim.rules.state import Settings
from strategies import HeuristicStrategy
from tests.kernel_support import (
    NO_JIT,
    STRATEGY_NAMES,
    kernel_bundle,
    kernel_context,
    kernel_copy,
    n_cases,
    reference_game,
)
from tests.rules_helpers import Scripted, content, content_with, new_game

ADV = K.ADVANCED_SKILLS


def adv(name: str) -> int:
    return ADV.index(name)


def held(p) -> list[str]:
    return [ADV[s] for s in range(len(ADV)) if p.advanced[s]]


def pick(name: str):
    """A ``setup_advanced_skill`` answer choosing the named skill."""
    return lambda view, skills: skills.index(adv(name))


def test_players_pick_two_advanced_skills_from_every_skill():
    strats = [Scripted() for _ in range(2)]
    strats[0].push("setup_advanced_skill", pick("stealth"), pick("speed"))
    strats[1].push("setup_advanced_skill", pick("stealth"), pick("lockpicking"))
    g = new_game(2, strategies=strats)
    assert set(held(g.players[0])) == {"stealth", "speed"}
    assert set(held(g.players[1])) == {"stealth", "lockpicking"}
    offered = strats[0].asked("setup_advanced_skill")
    assert offered[0] == (list(range(len(ADV))),)  # the default pack lets every character pick any skill
    assert adv("stealth") not in offered[1][0]  # a skill is not offered twice
    assert not strats[0].pending() and not strats[1].pending()
    check_invariants(g)


def test_fixed_skills_take_the_characters_own_pair_without_a_decision():
    c = content()
    for kw in ({"variant": "fixed-skills"}, {}):
        strats = [Scripted() for _ in range(4)]
        s = Settings.build(c, 4, None, kw.get("variant"), skills="fixed" if not kw else None)
        assert s.fixed_skills and "fixed-skills" in s.variant_label
        from sim.rules.setup import setup_game

        g = setup_game(c, s, strats, 1, 0)
        for p in g.players:
            assert p.advanced == [bool(x) for x in c.character_advanced[p.character]]
        assert not any(st.asked("setup_advanced_skill") for st in strats)


def test_skills_mode_is_validated():
    with pytest.raises(ValueError, match="skills: must be one of pick, fixed"):
        Settings.build(content(), 4, skills="chosen")


def test_a_pack_limits_a_characters_choice_list():
    def patch(raw):
        raw["characters.toml"]["character"][0]["advanced_choices"] = ["stealth", "seduction", "driving_piloting"]

    c = content_with(patch)
    strats = [Scripted() for _ in range(4)]
    g = new_game(4, cont=c, strategies=strats)
    asked = strats[0].asked("setup_advanced_skill")
    assert asked[0] == (sorted([adv("seduction"), adv("stealth"), adv("driving_piloting")]),)
    assert len(asked) == 2
    assert all(s in ("stealth", "seduction", "driving_piloting") for s in held(g.players[0]))
    # the other characters keep the default: every skill
    assert strats[1].asked("setup_advanced_skill")[0] == (list(range(len(ADV))),)


def test_a_choice_list_shorter_than_the_picks_is_refused():
    from sim.content import ContentError

    def patch(raw):
        raw["characters.toml"]["character"][0]["advanced_choices"] = ["stealth"]

    with pytest.raises(ContentError, match="characters.toml.*Calli Dagger.*advanced_choices lists 1 skills"):
        content_with(patch)


def test_tokens_run_out_at_set_up():
    """Six players all want Seduction: only 4 tokens, so seats 4 and 5 are not offered it."""
    strats = [Scripted() for _ in range(6)]
    for s in strats:
        s.set_default("setup_advanced_skill",
                      lambda view, skills: skills.index(adv("seduction")) if adv("seduction") in skills else 0)
    g = new_game(6, strategies=strats)
    holders = [p.seat for p in g.players if p.advanced[adv("seduction")]]
    assert holders == [0, 1, 2, 3]
    for seat in (4, 5):
        assert all(adv("seduction") not in args[0] for args in strats[seat].asked("setup_advanced_skill"))
    check_invariants(g)


def test_the_token_limit_is_a_pack_value():
    def patch(raw):
        raw["intel.toml"]["components"]["advanced_skill_tokens"] = 1

    c = content_with(patch)
    assert c.n_advanced_skill_tokens == 1
    strats = [Scripted() for _ in range(4)]  # every seat picks the first skill offered
    g = new_game(4, cont=c, strategies=strats)
    picks = [s for p in g.players for s in held(p)]
    assert len(picks) == 8 and len(set(picks)) == 8  # one token of each: no skill twice


def test_fixed_skills_honour_the_limit_in_seat_order():
    c = content()
    s = Settings.build(c, 5, ["Calli Dagger"] * 5, "fixed-skills")
    from sim.rules.setup import setup_game

    g = setup_game(c, s, [Scripted() for _ in range(5)], 1, 0)
    assert [held(p) for p in g.players] == [["seduction", "disguise"]] * 4 + [[]]
    check_invariants(g)


def test_rewards_grant_an_advanced_skill_only_if_a_token_is_left():
    g = new_game(6)
    sed = adv("seduction")
    for p in g.players:
        p.advanced = [False] * len(ADV)
    for seat in (1, 2, 3, 4):
        g.players[seat].advanced[sed] = True
    assert not advanced_available(g, sed)
    apply_effect(g, 0, K.E_NAMED_ADVANCED_SKILL, 1, sed)
    assert not g.players[0].advanced[sed]
    apply_effect(g, 0, K.E_NAMED_ADVANCED_SKILL, 1, adv("stealth"))
    assert g.players[0].advanced[adv("stealth")]
    s = g.strategies[0]
    apply_effect(g, 0, K.E_ADVANCED_SKILL, 1, -1)
    offered = s.asked("advanced_skill")[-1][0]
    assert sed not in offered and adv("stealth") not in offered
    # with a token free again (a test arranges it), the named skill is granted
    g.players[4].advanced[sed] = False
    assert advanced_available(g, sed)
    apply_effect(g, 0, K.E_NAMED_ADVANCED_SKILL, 1, sed)
    assert g.players[0].advanced[sed]
    check_invariants(g)


def test_heuristic_picks_by_its_stated_rule():
    """First pick: the most level-1 henchman auto-passes among skills nobody holds; second:
    the most encounter auto-passes (ties to the lower skill)."""
    c = content()
    h1 = autopass_level1_counts(c)
    enc = autopass_encounter_counts(c)
    g = new_game(4, strategies=[strategies.make("heuristic") for _ in range(4)])
    taken: set[int] = set()
    for p in g.players:
        first = max((s for s in range(len(ADV)) if s not in taken),
                    key=lambda s: (h1[s], enc[s], -s))
        second = max((s for s in range(len(ADV)) if s != first), key=lambda s: (enc[s], -s))
        assert set(held(p)) == {ADV[first], ADV[second]}
        taken |= {first, second}
    # four players cover the four level-1 henchmen of the default pack
    level1 = {int(x) for x in c.henchman_autopass[:, 0] if x >= 0}
    assert level1 <= {s for p in g.players for s in range(len(ADV)) if p.advanced[s]}


@pytest.mark.parametrize("players", [1, 4, 6])
def test_kernel_set_up_pick_matches_reference(players):
    """The kernel's setup_advanced_skill answers as the readable strategy on the same positions."""
    kp = kernel_bundle()
    for case in range(n_cases(40, 2)):
        name = STRATEGY_NAMES[case % len(STRATEGY_NAMES)]
        g, _s, cfg, sid, prm = reference_game(players, name, 61, case)
        for seat in range(players):
            st, rs = kernel_copy(g)
            me = g.players[seat]
            if case % 2:
                me.advanced = [False] * len(ADV)
                st, rs = kernel_copy(g)
            options = [s for s in range(len(ADV)) if not me.advanced[s] and advanced_available(g, s)]
            opts = np.array(options, dtype=np.int64)
            want = g.strategy(seat).setup_advanced_skill(g.view(seat), options)
            got = KS.setup_advanced_skill(kernel_context(pk=kp, cfg=cfg, st=st, rs=rs, sid=sid, prm=prm),
                                          seat, opts, len(options))
            assert got == want, (players, name, case, seat)


@njit
def last_skill(view, skills, n):
    return n - 1


@njit
def never_auto(view, skill, henchman, no_advance):
    return False


class LastSkill(HeuristicStrategy):
    """The readable twin of the two kernel decisions above."""

    def setup_advanced_skill(self, view, skills):
        return len(skills) - 1

    def use_auto_pass(self, view, skill, henchman, no_advance):
        return False


@pytest.mark.slow
@pytest.mark.skipif(NO_JIT, reason="custom decisions are compiled code")
def test_kernel_strategy_replaces_the_set_up_pick():
    ks = KernelStrategy("heuristic", setup_advanced_skill=last_skill, use_auto_pass=never_auto, name="last")
    got = sim.simulate(players=4, games=200, seed=3, strategy=ks)
    want = sim.simulate(players=4, games=200, seed=3, strategy=[LastSkill(name="last") for _ in range(4)],
                        engine="reference")
    assert got.equals(want)
    assert not got.equals(sim.simulate(players=4, games=200, seed=3, strategy="heuristic"))
