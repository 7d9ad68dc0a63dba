"""Basic skills stay inside the limits shown on the Character Mat (Appendix: "beyond the limits
shown on the Character Mat"): ``skill_min`` / ``skill_max`` per character in characters.toml."""

import pytest

import sim
from sim.content import ContentError
from sim.content import constants as K
from sim.rules.choices import Reward
from sim.rules.encounters import apply_effect
from sim.rules.invariants import check_invariants
from sim.rules.missions import reward_options
from tests.rules_helpers import content, content_with, new_game

SPY, PERS = K.BASIC_SKILLS.index("spycraft"), K.BASIC_SKILLS.index("persuasion")


def narrow(raw):
    """Calli's mat: skills 1..3 (her start: 2 2 2 1 1)."""
    calli = raw["characters.toml"]["character"][0]
    calli["skill_min"] = 1
    calli["skill_max"] = 3


def test_default_pack_limits_are_zero_to_five():
    c = content()
    assert c.character_skill_min.tolist() == [0] * 5
    assert c.character_skill_max.tolist() == [5] * 5


def test_raises_stop_at_the_mats_maximum():
    g = new_game(2, cont=content_with(narrow))
    calli = g.players[0]
    for _ in range(3):
        apply_effect(g, 0, K.E_UP_SKILL, 1, SPY)
    assert calli.skills[SPY] == 3
    # Rocko keeps the default 0..5
    for _ in range(5):
        apply_effect(g, 1, K.E_UP_SKILL, 1, SPY)
    assert g.players[1].skills[SPY] == 5
    check_invariants(g)


def test_lowering_stops_at_the_mats_minimum():
    g = new_game(2, cont=content_with(narrow))
    for _ in range(3):
        apply_effect(g, 0, K.E_LOWER_SKILL, 1, PERS)
    assert g.players[0].skills[PERS] == 1
    for _ in range(3):
        apply_effect(g, 1, K.E_LOWER_SKILL, 1, PERS)
    assert g.players[1].skills[PERS] == 0


def test_up_any_skill_and_mission_rewards_offer_only_skills_below_the_maximum():
    g = new_game(2, cont=content_with(narrow))
    calli = g.players[0]
    calli.skills = [3, 3, 2, 3, 1]
    apply_effect(g, 0, K.E_UP_ANY_SKILL, 1, -1)
    assert g.strategies[0].asked("skill_up")[-1] == ([2, 4],)
    skills = [o.skill for o in reward_options(g, 0) if o.kind == Reward.SKILL]
    assert skills == [4]  # the default strategy raised deception (index 2) to 3 above


def test_a_start_outside_the_limits_is_refused():
    def patch(raw):
        raw["characters.toml"]["character"][0]["skill_max"] = 1

    with pytest.raises(ContentError, match=r"characters.toml.*Calli Dagger.*outside the mat's limits"):
        content_with(patch)

    def patch2(raw):
        raw["characters.toml"]["character"][0]["skill_min"] = 4
        raw["characters.toml"]["character"][0]["skill_max"] = 3

    with pytest.raises(ContentError, match="skill_min 4 is above skill_max 3"):
        content_with(patch2)


@pytest.mark.parametrize("players", [1, 4])
def test_engines_agree_with_narrow_mats(players):
    def patch(raw):
        for ch in raw["characters.toml"]["character"]:
            ch["skill_max"] = 3
            ch["skills"] = {k: min(v, 3) for k, v in ch["skills"].items()}

    c = content_with(patch)
    for strategy in ("heuristic", "random"):
        got = sim.simulate(players=players, games=300, seed=5, strategy=strategy, content=c)
        want = sim.simulate(players=players, games=300, seed=5, strategy=strategy, content=c, engine="reference")
        assert got.equals(want)
