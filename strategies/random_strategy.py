"""``random``: uniform over the legal choices at every decision (a test opponent)."""

from __future__ import annotations

from strategies.base import Strategy


class RandomStrategy(Strategy):
    """Every choice uniform among the legal ones, from the game's strategy stream."""

    name = "random"

    def kernel_vector(self):
        """``(strategy id, parameter vector)`` of the kernel's twin: no parameters."""
        import numpy as np

        from sim.kernel.layout import N_PARAMS, RANDOM

        return RANDOM, np.zeros(N_PARAMS, dtype=np.float64)

    def _coin(self, view) -> bool:
        return view.random_below(2) == 1

    def setup_level2_henchmen(self, view, k):
        pool = list(range(len(view.henchman_level)))
        out = []
        for _ in range(k):
            out.append(pool.pop(view.random_below(len(pool))))
        return out

    def setup_extras(self, view, n, max_un):
        return view.random_below(min(n, max_un) + 1)

    def rest(self, view):
        return self._coin(view)

    def move(self, view, moves):
        return view.random_below(len(moves))

    def token(self, view, choices):
        return view.random_below(len(choices))

    def test_option(self, view, options):
        return view.random_below(len(options))

    def draw_die(self, view, test, drawn):
        return self._coin(view)

    def resolve_plus_one(self, view, test, drawn):
        return self._coin(view)

    def reroll(self, view, test, dice, faces):
        k = view.random_below(len(dice) + 1)
        return k - 1  # -1 = no reroll

    def gamble_exchange(self, view, hand, free):
        spend = view.me.resolve > 0 and self._coin(view)
        limit = 5 if spend else free
        n = view.random_below(limit + 1)
        positions = list(range(5))
        mask = 0
        for _ in range(n):
            mask |= 1 << positions.pop(view.random_below(len(positions)))
        return mask, spend and n > free

    def mission_reward(self, view, options):
        return view.random_below(len(options))

    def skill_up(self, view, skills):
        return view.random_below(len(skills))

    def advanced_skill(self, view, skills):
        return view.random_below(len(skills))

    def skill_down(self, view, skills):
        return view.random_below(len(skills))

    def status_top_secret(self, view):
        return self._coin(view)

    def setup_advanced_skill(self, view, skills):
        return view.random_below(len(skills))

    def play_auto_pass(self, view, test):
        return self._coin(view)

    def play_two_dice(self, view, test):
        return self._coin(view)

    def cancel_advance(self, view, card):
        return self._coin(view)

    def heal_all(self, view):
        return self._coin(view)

    def intel_to_pool(self, view):
        return self._coin(view)

    def use_watch(self, view):
        return self._coin(view)

    def use_auto_pass(self, view, skill, henchman, no_advance):
        return self._coin(view)
