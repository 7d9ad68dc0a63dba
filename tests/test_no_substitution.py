"""The kernel never plays another strategy in place of the one asked for."""

import re

import pytest

import sim
import strategies
from sim.kernel.custom import KernelStrategy
from strategies import HeuristicStrategy, RandomStrategy


class Wary(HeuristicStrategy):
    """The heuristic with one decision changed: it always takes the last token choice."""

    def token(self, view, choices):
        return len(choices) - 1


class Loud(RandomStrategy):
    def rest(self, view):
        return False


def test_subclass_with_one_override_is_refused_on_the_kernel():
    with pytest.raises(ValueError) as err:
        sim.simulate(players=2, games=10, strategy=Wary(name="wary"), seed=1)
    msg = str(err.value)
    assert "'wary'" in msg and "token" in msg
    assert "engine='reference'" in msg and "KernelStrategy" in msg


def test_same_subclass_runs_on_the_reference_engine_and_plays_differently():
    wary = sim.simulate(players=2, games=20, strategy=Wary(name="wary"), seed=1, engine="reference")
    plain = sim.simulate(players=2, games=20, strategy="heuristic", seed=1, engine="reference")
    assert wary["strategy"].unique().to_list() == ["wary"]
    # the override is really played: the rows differ from the plain heuristic's
    assert not wary.drop("strategy").equals(plain.drop("strategy"))


def test_random_subclass_and_patched_instance_are_refused():
    with pytest.raises(ValueError, match="no kernel twin"):
        sim.simulate(players=1, games=5, strategy=Loud(), seed=1)
    patched = HeuristicStrategy(name="patched")
    patched.rest = lambda view: True
    with pytest.raises(ValueError, match=r"no kernel twin .*rest"):
        sim.simulate(players=1, games=5, strategy=patched, seed=1)


def test_registered_subclass_is_refused_by_name_and_summary_only():
    name = "wary_for_test"
    if name not in strategies.names():
        strategies.register(name, lambda **p: Wary(name=name, **p))
    with pytest.raises(ValueError, match="no kernel twin"):
        sim.simulate(players=2, games=5, strategy=name, seed=1)
    with pytest.raises(ValueError, match="no kernel twin"):
        sim.simulate(players=2, games=5, strategy=name, seed=1, summary_only=True)


def test_kernel_strategy_on_a_subclassed_base_is_refused():
    from numba import njit

    @njit
    def token(view, choices, n):
        return 0

    name = "wary_base_for_test"
    if name not in strategies.names():
        strategies.register(name, lambda **p: Wary(name=name, **p))
    with pytest.raises(ValueError, match="no kernel twin"):
        sim.simulate(players=2, games=5, strategy=KernelStrategy(name, token=token), seed=1)


def test_built_ins_and_named_parameter_sets_still_play():
    plain = HeuristicStrategy(name="mine", pool_target=5)
    df = sim.simulate(players=2, games=20, strategy=plain, seed=3)
    ref = sim.simulate(players=2, games=20, strategy=plain, seed=3, engine="reference")
    assert df.equals(ref)


def test_a_patched_helper_method_or_module_value_is_refused_not_played_as_the_built_in(monkeypatch):
    """The kernel plays the built-in families as its own twin code: an object with a helper of its own,
    a class helper replaced, or a module value changed would be played as the plain built-in while the
    readable engine plays the change (20 against 86 wins of 200 for a team that never fights)."""
    import strategies.heuristic as heuristic
    from strategies.random_strategy import RandomStrategy as Random

    kw = {"players": 4, "games": 200, "seed": 1}
    coward = HeuristicStrategy(name="coward")
    coward._ready_to_fight = lambda view: False
    assert not sim.simulate(strategy=coward, engine="reference", **kw).drop("strategy").equals(
        sim.simulate(strategy="heuristic", engine="reference", **kw).drop("strategy"))  # it plays otherwise
    with pytest.raises(ValueError, match=r"no kernel twin \(the object has its own _ready_to_fight\)"):
        sim.simulate(strategy=coward, **kw)
    coin = Random()
    coin._coin = lambda view: True
    with pytest.raises(ValueError, match=r"the object has its own _coin"):
        sim.simulate(strategy=coin, **kw)
    with monkeypatch.context() as m:
        m.setattr(HeuristicStrategy, "_ready_to_fight", lambda self, view: False)
        with pytest.raises(ValueError, match=r"changed after import: HeuristicStrategy\._ready_to_fight"):
            sim.simulate(strategy="heuristic", **kw)
        with pytest.raises(ValueError, match="changed after import"):  # every object of the family
            sim.simulate(strategy="bold", summary_only=True, **kw)
    means = next(iter(heuristic.MOVE_COST))
    with monkeypatch.context() as m:
        m.setitem(heuristic.MOVE_COST, means, heuristic.MOVE_COST[means] + 5)
        with pytest.raises(ValueError, match=r"strategies\.heuristic\.MOVE_COST"):
            sim.simulate(strategy="heuristic", **kw)
    assert strategies.builtin_changes() == []  # put back: played again
    assert sim.simulate(strategy="heuristic", **kw).height == 200


class Brave(HeuristicStrategy):
    """A subclass that keeps the heuristic's name."""

    def token(self, view, choices):
        return 0


@pytest.mark.parametrize("engine", ["kernel", "reference"])
def test_a_table_never_labels_games_with_a_strategy_that_did_not_play_them(engine):
    """The strategy column is each seat's name: an object named like a registered strategy that it is not, the
    tuned set of another player count, or two seats of one name that play differently are refused."""
    kw = {"games": 5, "seed": 1, "engine": engine}
    if engine == "reference":  # (the kernel refuses a subclass first: it has no kernel twin)
        with pytest.raises(ValueError, match=r"strategy object named 'heuristic' is not the registered strategy "
                                             r"'heuristic' at 2 players \(it is a Brave, not a HeuristicStrategy\)"):
            sim.simulate(players=2, strategy=Brave(), **kw)
        assert sim.simulate(players=2, strategy=Brave(name="brave"), **kw)["strategy"].unique().to_list() == ["brave"]
    with pytest.raises(ValueError, match=r"seats 0 and 1 are both labelled 'p2' but play differently"):
        sim.simulate(players=2, strategy=[HeuristicStrategy(name="p2", pool_target=2),
                                          HeuristicStrategy(name="p2", pool_target=3)], **kw)
    mixed = sim.simulate(players=2, strategy=[HeuristicStrategy(name="p2", pool_target=2), "heuristic"], **kw)
    assert mixed["strategy"].unique().to_list() == ["p2,heuristic"]
    sets = {p: strategies.make("tuned", players=p).params() for p in (1, 2)}
    assert sets[1] != sets[2]
    with pytest.raises(ValueError, match=r"'tuned' at 2 players \(it holds the set of 1 player\).*"
                                         r"strategies\.make\('tuned', players=2\)"):
        sim.simulate(players=2, strategy=strategies.make("tuned", players=1), **kw)
    assert sim.simulate(players=2, strategy=strategies.make("tuned", players=2), **kw)["strategy"][0] == "tuned"
    # parameters of its own: labelled with them, built by the registry as params= builds it ...
    own = sim.simulate(players=2, strategy=strategies.make("heuristic", pool_target=5, exchange_when="early"), **kw)
    assert own.equals(sim.simulate(players=2, strategy="heuristic", params={"exchange_when": "early",
                                                                              "pool_target": 5}, **kw))
    assert own["strategy"].unique().to_list() == ["heuristic[exchange_when=early;pool_target=5]"]
    assert not own.drop("strategy").equals(sim.simulate(players=2, strategy="heuristic", **kw).drop("strategy"))
    # ... the registered strategy's own values add nothing to the label (they play its games) ...
    bold = strategies.make("bold").params()
    assert sim.simulate(players=2, strategy="bold", params=bold, **kw)["strategy"].unique().to_list() == ["bold"]
    # ... and an object built without the registry, under the registered name, is refused
    with pytest.raises(ValueError, match=r"^strategy object named 'heuristic' is not the registered strategy "
                                         r"'heuristic' at 2 players \(it has other parameters: pool_target=2\): its "
                                         r"games would be labelled 'heuristic'; build it with strategies\.make\("
                                         r"'heuristic', \.\.\.\), which labels it with its parameters, or give it "
                                         r"a name of its own \(name=\.\.\.\)$"):
        sim.simulate(players=2, strategy=[HeuristicStrategy(pool_target=2), "heuristic"], **kw)
    # a preset's name on the heuristic's defaults (it played the heuristic: 45% where bold wins 17% at 4 players)
    with pytest.raises(ValueError, match=r"^strategy object named 'bold' is not the registered strategy 'bold' at 2 "
                                         r"players \(it has other parameters: "):
        sim.simulate(players=2, strategy=HeuristicStrategy(name="bold"), **kw)
    # a name that is no label: a mixed team's, or none
    for name in ("heuristic,bold", "", " ", None, "heuristic ", " bold"):  # spaces around: printed as another
        with pytest.raises(ValueError, match=rf"^strategy object HeuristicStrategy named {re.escape(repr(name))}: a "
                                             r"label is a non-empty string without a comma"):
            sim.simulate(players=2, strategy=HeuristicStrategy(name=name), **kw)


def test_a_kernel_strategy_is_labelled_with_its_base_s_parameters():
    """``KernelStrategy("heuristic", params={...})`` was labelled ``heuristic+token`` whatever the parameters."""
    from sim.kernel.custom import decisions_digest
    from strategies.examples import brave_token

    code = decisions_digest({"token": brave_token})[:6]
    assert KernelStrategy("heuristic", token=brave_token).name == f"heuristic+token=brave_token@{code}"
    assert KernelStrategy("heuristic", params={"pool_target": 5}, token=brave_token).name == \
        f"heuristic[pool_target=5]+token=brave_token@{code}"
    assert KernelStrategy("bold", params=strategies.make("bold").params(), token=brave_token).name == \
        f"bold+token=brave_token@{code}"
    with pytest.raises(ValueError, match=r"^KernelStrategy: base 'heuristic,bold' names a mixed team"):
        KernelStrategy("heuristic,bold", token=brave_token)


SAME_NAMED = """
from numba import njit

T = {t}


@njit
def token(view, choices, n):
    return {body}
"""


def test_kernel_strategies_that_run_other_code_never_share_a_label(tmp_path, monkeypatch):
    """Two token decisions, each a function named ``token`` (a notebook's cell run again with another body, or
    two modules): their strategies were both labelled ``heuristic+token`` and recorded the same parameters, so
    their games merged in a table of both. The label and params() carry a digest of the code, and of the values
    it reads, worked out when asked (``module.T = 1`` set since is told too)."""
    import importlib
    import sys

    monkeypatch.syspath_prepend(str(tmp_path))
    made = []
    for i, body in enumerate(("0", "T")):
        (tmp_path / f"same_named_{i}.py").write_text(SAME_NAMED.format(t=0, body=body))
        monkeypatch.delitem(sys.modules, f"same_named_{i}", raising=False)
        made.append(importlib.import_module(f"same_named_{i}"))
    first, last = (KernelStrategy("heuristic", token=m.token) for m in made)
    assert first.name != last.name and first.params() != last.params()
    assert first.name.startswith("heuristic+token=token@") and last.name.startswith("heuristic+token=token@")
    before = first.name, last.name
    made[0].T = 1  # a value the function's module holds, not read by it: the same code
    made[1].T = 1  # a value the function reads: other play
    assert first.name == before[0] and last.name != before[1]
    named = KernelStrategy("heuristic", name="mine", token=made[0].token)
    assert named.name == "mine" and named.params()["code"] == first.params()["code"]
