"""A player's view of a kernel game: the only thing a kernel strategy reads.

Your ``@njit`` decisions (:class:`sim.kernel.custom.KernelStrategy`) receive a
``view`` as their first argument, the same name and the same attributes as the
readable engine's :class:`sim.rules.state.PlayerView`, so that a Python strategy
and its kernel twin are written against one vocabulary::

    view.lobo                    # Dr. Lobo's track
    view.resolve(view.seat)      # my Resolve
    view.airport_open(space)     # ...
    view.base_token(choices, n)  # the base strategy's own decision (Python: super().token)
    view.base_rest()             # ... of a decision without options (Python: super().rest)

:data:`VIEW_API` lists every documented attribute with its arguments; it is the
whole interface (docs/RULES.md "The player's view" and the README walk-through).
An index argument outside its range (a seat, a henchman, a skill...:
``sim.rules.state.VIEW_INDEXES``) is refused, as the readable engine refuses it and in
its words: the kernel reads without bounds checks, so ``view.resolve(view.n_players)``
would read whatever lies past the players. The check is in the view only, which the
built-in strategies never use. The view knows which decision it was made for (the
adapters of :mod:`sim.kernel.custom` give it the decision's code) and names it.
The view exposes public facts and the player's own hand only: face-down Intel and
Location tokens are counted, never identified, and no deck's order can be read.
Inside compiled code the view has no other attribute (numba refuses
``view.st`` at compile time); the kernel's state stays out of reach.

Two implementations share one table of plain functions ``f(ctx, seat, *args)``
(below): compiled, a numba type :class:`ViewType` whose attributes call them;
under ``NUMBA_DISABLE_JIT=1``, the plain class :class:`KernelView`.
"""

from __future__ import annotations

from numba import config, types
from numba.core import cgutils
from numba.core.datamodel import models
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic, overload_attribute, overload_method, register_model

from sim.content import constants as codes
from sim.jit import KERNEL_OPTIONS, njit
from sim.kernel.custom import _RAISE_OPTIONS, DECISIONS, OPTION_COUNTS, SIGNATURES, VIEW_REFUSED
from sim.kernel.decks import airport_open as _airport_open_nb
from sim.kernel.decks import lobo as _lobo_nb
from sim.kernel.decks import player_base, status_bonus
from sim.kernel.layout import (
    C_PLAYERS,
    K_N_HENCHMEN,
    K_N_INTEL,
    K_N_SPACES,
    K_N_STATUS,
    L_FACEUP,
    L_GREEN,
    L_HLEVEL,
    L_INTEL,
    L_STATUS,
    N_ADV,
    N_SKILLS,
    P_ADV,
    P_CHAR,
    P_FLIPPED,
    P_INJ,
    P_LIFE,
    P_MISSIONS,
    P_N_MISSIONS,
    P_N_TS,
    P_RESOLVE,
    P_RESOLVE_MAX,
    P_SKILLS,
    P_SPACE,
    P_TS,
    P_UN,
    S_DICE_RES,
    S_LOC_TARGET,
    S_LOC_TRACK,
    S_MOVE_RES,
    S_TURN,
    S_UN_SUPPLY,
    S_WATCHED,
)
from sim.rng import STRATEGY, next_below_nb
from sim.rules.state import (
    OPEN_END,
    RANDOM_BELOW_MAX,
    VIEW_INDEX_KINDS,
    VIEW_INDEXES,
    view_argument_text,
)

jit = njit(**KERNEL_OPTIONS)
inline_jit = njit(inline="always", **KERNEL_OPTIONS)  # returns a reference: inlined (no runtime to count it)


# --- the facts, as plain functions of (ctx, seat, ...) ----------------------------------------
@jit
def _seat(ctx, seat):
    """The deciding seat."""
    return seat


@inline_jit
def _content(ctx, seat):
    """The content pack (static: the printed cards and board)."""
    return ctx.pk


@jit
def _n_players(ctx, seat):
    """Players at the table."""
    return ctx.cfg[C_PLAYERS]


@jit
def _n_henchmen(ctx, seat):
    """Henchmen in the game."""
    return ctx.pk.scal[K_N_HENCHMEN]


@jit
def _lobo(ctx, seat):
    """Dr. Lobo's track."""
    return _lobo_nb(ctx.pk, ctx.st)


@jit
def _location_track(ctx, seat):
    """The Location Track."""
    return ctx.st[S_LOC_TRACK]


@jit
def _location_target(ctx, seat):
    """The Location Track's winning mark."""
    return ctx.st[S_LOC_TARGET]


@jit
def _rounds(ctx, seat):
    """The round being played."""
    n = ctx.cfg[C_PLAYERS]
    return (ctx.st[S_TURN] + n - 1) // n


@jit
def _count_at(ctx, region, n, where):
    """Tokens of a location region (``L_INTEL``, ``L_GREEN``) at ``where``: counted, not named."""
    off = ctx.pk.lay[region]
    k = 0
    for t in range(n):
        if ctx.st[off + t] == where:
            k += 1
    return k


@jit
def _count_intel(ctx, where):
    """Yellow Intel tokens at ``where``."""
    return _count_at(ctx, L_INTEL, ctx.pk.scal[K_N_INTEL], where)


@jit
def _count_green(ctx, where):
    """Green Location tokens at ``where``."""
    return _count_at(ctx, L_GREEN, ctx.pk.scal[K_N_HENCHMEN], where)


@jit
def _pool_size(ctx, seat):
    """Intel tokens in the Pool."""
    return _count_intel(ctx, codes.POOL)


@jit
def _intel_supply_size(ctx, seat):
    """Intel tokens in the supply."""
    return _count_intel(ctx, codes.SUPPLY)


@jit
def _green_supply_size(ctx, seat):
    """Location tokens in the supply."""
    return _count_green(ctx, codes.SUPPLY)


@jit
def _un_supply(ctx, seat):
    """UN Transport tokens in the supply."""
    return ctx.st[S_UN_SUPPLY]


@jit
def _dice_resolve_used(ctx, seat):
    """Resolve already spent on dice this turn."""
    return ctx.st[S_DICE_RES] != 0


@jit
def _move_resolve_used(ctx, seat):
    """Resolve already spent on movement this turn."""
    return ctx.st[S_MOVE_RES] != 0


@jit
def _watched_advance(ctx, seat):
    """Advancement of the villain card the Watch showed this turn (0 an injury card), or None."""
    c = ctx.st[S_WATCHED]
    if c < 0:
        return None
    if ctx.pk.villain_injury[c]:
        return 0
    return ctx.pk.villain_advance[c]


@jit
def _henchman(ctx, seat, h):
    """Henchman ``h``'s level (1..3, or DEFEATED)."""
    return ctx.st[ctx.pk.lay[L_HLEVEL] + h]


def _player_field(offset):
    """``f(ctx, seat, who)``: the number at ``offset`` of seat ``who``'s player block."""

    @jit
    def read(ctx, seat, who):
        """The number at ``offset`` of seat ``who``'s player block."""
        return ctx.st[player_base(ctx.pk, who) + offset]

    return read


_character, _space, _resolve, _resolve_max, _life, _injuries, _un_tokens, _top_secret_count = (
    _player_field(o) for o in (P_CHAR, P_SPACE, P_RESOLVE, P_RESOLVE_MAX, P_LIFE, P_INJ, P_UN, P_N_TS))


@jit
def _skill(ctx, seat, who, skill):
    """Basic skill ``skill`` of seat ``who``."""
    return ctx.st[player_base(ctx.pk, who) + P_SKILLS + skill]


@jit
def _has_advanced(ctx, seat, who, skill):
    """Seat ``who`` has advanced skill ``skill``."""
    return ctx.st[player_base(ctx.pk, who) + P_ADV + skill] != 0


@jit
def _top_secret_effect(ctx, seat, who, i):
    """Effect code of the ``i``-th Top Secret card in seat ``who``'s hand."""
    b = player_base(ctx.pk, who)
    return ctx.pk.top_secret_effect[ctx.st[b + P_TS + i]]


@jit
def _mission_city(ctx, seat, who, i):
    """City of seat ``who``'s ``i``-th secret-mission card, -1 once flipped."""
    b = player_base(ctx.pk, who)
    if i >= ctx.st[b + P_N_MISSIONS] or ctx.st[b + P_FLIPPED + i] != 0:
        return -1
    return ctx.pk.fate_city[ctx.st[b + P_MISSIONS + i]]


@jit
def _pool_face_up(ctx, seat, kind):
    """Face-up Intel tokens of type ``kind`` in the Pool."""
    return _face_up_count(ctx, seat, codes.POOL, kind)


@jit
def _face_up_count(ctx, seat, where, kind):
    """Face-up Intel tokens of type ``kind`` at ``where``."""
    off, up = ctx.pk.lay[L_INTEL], ctx.pk.lay[L_FACEUP]
    k = 0
    for t in range(ctx.pk.scal[K_N_INTEL]):
        if ctx.st[off + t] == where and ctx.st[up + t] != 0 and ctx.pk.intel_token_type[t] == kind:
            k += 1
    return k


@jit
def _yellow_at(ctx, seat, where):
    """Yellow Intel tokens at ``where`` (counted, not named)."""
    return _count_intel(ctx, where)


@jit
def _green_at(ctx, seat, where):
    """Green Location tokens at ``where`` (counted, not named)."""
    return _count_green(ctx, where)


@jit
def _airport_open(ctx, seat, space):
    """The space has an open airport."""
    return _airport_open_nb(ctx.pk, ctx.st, space)


@jit
def _status_holder(ctx, seat, card):
    """Seat holding status card ``card`` (face up), or -1 in the deck, -2 out of the game."""
    return ctx.st[ctx.pk.lay[L_STATUS] + card]


@jit
def _status_modifier(ctx, seat, skill):
    """Dice my status cards add to (or take from) a test of basic skill ``skill``."""
    return status_bonus(ctx.pk, ctx.st, seat, skill)


@jit
def _random_below(ctx, seat, n):
    """A uniform draw in 0..n-1 from the game's strategy stream."""
    return next_below_nb(ctx.rs, STRATEGY, n)


# name -> (implementation, argument names): the whole documented view. No argument: a
# property (``view.lobo``); arguments: a method (``view.resolve(seat)``). The readable
# engine's PlayerView has every one of these names with the same meaning.
VIEW_API = {
    "seat": (_seat, ()),
    "content": (_content, ()),
    "n_players": (_n_players, ()),
    "n_henchmen": (_n_henchmen, ()),
    "lobo": (_lobo, ()),
    "location_track": (_location_track, ()),
    "location_target": (_location_target, ()),
    "rounds": (_rounds, ()),
    "pool_size": (_pool_size, ()),
    "intel_supply_size": (_intel_supply_size, ()),
    "green_supply_size": (_green_supply_size, ()),
    "un_supply": (_un_supply, ()),
    "dice_resolve_used": (_dice_resolve_used, ()),
    "move_resolve_used": (_move_resolve_used, ()),
    "watched_advance": (_watched_advance, ()),
    "henchman": (_henchman, ("h",)),
    "character": (_character, ("who",)),
    "space": (_space, ("who",)),
    "skill": (_skill, ("who", "skill")),
    "resolve": (_resolve, ("who",)),
    "resolve_max": (_resolve_max, ("who",)),
    "life": (_life, ("who",)),
    "injuries": (_injuries, ("who",)),
    "has_advanced": (_has_advanced, ("who", "skill")),
    "un_tokens": (_un_tokens, ("who",)),
    "top_secret_count": (_top_secret_count, ("who",)),
    "top_secret_effect": (_top_secret_effect, ("who", "i")),
    "mission_city": (_mission_city, ("who", "i")),
    "pool_face_up": (_pool_face_up, ("kind",)),
    "face_up_count": (_face_up_count, ("where", "kind")),
    "yellow_at": (_yellow_at, ("where",)),
    "green_at": (_green_at, ("where",)),
    "airport_open": (_airport_open, ("space",)),
    "status_holder": (_status_holder, ("card",)),
    "status_modifier": (_status_modifier, ("skill",)),
    "random_below": (_random_below, ("n",)),
}


# --- the arguments' ranges: r(ctx, seat, first) -> (lo, hi), ``first`` the call's first argument ------
# An index outside its range is refused where a decision asks (the kernel reads without bounds checks:
# st[player_base(pk, -1) + P_RESOLVE] is another block's number), in the readable engine's words
# (sim.rules.state.view_argument_text); the built-in strategies never read through the view.
@jit
def _seats(ctx, seat, first):
    """The seats at the table."""
    return 0, ctx.cfg[C_PLAYERS] - 1


@jit
def _henchmen(ctx, seat, first):
    """The henchmen in the game."""
    return 0, ctx.pk.scal[K_N_HENCHMEN] - 1


@jit
def _basic_skills(ctx, seat, first):
    """The basic skills."""
    return 0, N_SKILLS - 1


@jit
def _advanced_skills(ctx, seat, first):
    """The advanced skills."""
    return 0, N_ADV - 1


@jit
def _hand(ctx, seat, who):
    """The Top Secret cards in seat ``who``'s hand."""
    return 0, ctx.st[player_base(ctx.pk, who) + P_N_TS] - 1


@jit
def _mission_cards(ctx, seat, first):
    """A secret-mission card (past the last: -1)."""
    return 0, OPEN_END


@jit
def _intel_types(ctx, seat, first):
    """The Intel types."""
    return 0, len(codes.INTEL_TYPES) - 1


@jit
def _places(ctx, seat, first):
    """A space, the supply or the Pool."""
    return min(codes.SUPPLY, codes.POOL), ctx.pk.scal[K_N_SPACES] - 1


@jit
def _spaces(ctx, seat, first):
    """The spaces."""
    return 0, ctx.pk.scal[K_N_SPACES] - 1


@jit
def _status_cards(ctx, seat, first):
    """The status cards."""
    return 0, ctx.pk.scal[K_N_STATUS] - 1


@jit
def _outcomes(ctx, seat, first):
    """The number of outcomes of a draw."""
    return 1, RANDOM_BELOW_MAX


# the kind of an argument (sim.rules.state.VIEW_INDEX_KINDS) -> its range
RANGES = {"seat": _seats, "henchman": _henchmen, "basic skill": _basic_skills, "advanced skill": _advanced_skills,
          "top secret card": _hand, "mission card": _mission_cards, "intel type": _intel_types, "place": _places,
          "space": _spaces, "status card": _status_cards, "outcomes": _outcomes}


_argument_text = njit(**_RAISE_OPTIONS)(view_argument_text)


def _refuser(name: str, position: int):
    """``refuse(code, a0, a1, lo, hi)``: the refusal of argument ``position`` of ``view.<name>(a0[, a1])``
    asked by decision ``code`` (-1: none), a ValueError beginning with ``VIEW_REFUSED``
    (:meth:`sim.kernel.custom.KernelStrategy.refusal` names the strategy). Compiled with numba's runtime,
    which builds the text: it runs only to raise."""
    param, what = VIEW_API[name][1][position], VIEW_INDEX_KINDS[VIEW_INDEXES[name][position]]
    two = len(VIEW_API[name][1]) == 2

    def refuse(code, a0, a1, lo, hi):
        """Raise the refusal."""
        args = str(a0) + ", " + str(a1) if two else str(a0)
        decision = DECISIONS[code] if code >= 0 else ""
        raise ValueError(VIEW_REFUSED + _argument_text(decision, name, args, param, lo, hi, what))

    return njit(**_RAISE_OPTIONS)(refuse)


# name -> ((its range, its refusal) for each argument): the checks of a view method's arguments
CHECKS = {name: tuple((RANGES[kind], _refuser(name, i)) for i, kind in enumerate(VIEW_INDEXES[name]))
          for name, (_, args) in VIEW_API.items() if args}


# --- compiled: a numba type with exactly these attributes -------------------------------------
class ViewType(types.Type):
    """numba type of a player's view: a game context, a seat and the decision asked, with no readable fields."""

    def __init__(self, ctx):
        """The view type of a context type."""
        self.ctx = ctx
        super().__init__(name=f"PlayerView[{ctx}]")


@register_model(ViewType)
class _ViewModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        """Three members: the context, the seat and the decision's code (-1: none)."""
        super().__init__(dmm, fe_type, [("ctx", fe_type.ctx), ("seat", types.int64), ("code", types.int64)])


def _view_codegen(context, builder, sig, args):
    """Fill the struct: ``(ctx, seat[, code])``, the code -1 where none is given. The view holds a
    reference to the context's arrays: code with numba's runtime (not the kernel's) counts it, as it
    counts the view's own release (without, a view made in such code freed the arrays it borrowed)."""
    v = cgutils.create_struct_proxy(sig.return_type)(context, builder)
    v.ctx = args[0]
    v.seat = context.cast(builder, args[1], sig.args[1], types.int64)
    v.code = (context.cast(builder, args[2], sig.args[2], types.int64) if len(args) > 2
              else context.get_constant(types.int64, -1))
    return impl_ret_borrowed(context, builder, sig.return_type, v._getvalue())


@intrinsic
def _make_view(typingctx, ctx, seat):
    """A view of ``ctx`` for ``seat``, no decision named (a value: no allocation)."""
    return ViewType(ctx)(ctx, seat), _view_codegen


@intrinsic
def _make_decision_view(typingctx, ctx, seat, code):
    """A view of ``ctx`` for ``seat`` asked decision ``code`` (sim.kernel.custom.DECISIONS), which its
    refusals name."""
    return ViewType(ctx)(ctx, seat, code), _view_codegen


def _member(name: str, typeof):
    """An intrinsic reading member ``name`` of a view (``typeof(view type)``: its numba type)."""
    @intrinsic
    def read(typingctx, view):
        """The view's member."""

        def codegen(context, builder, sig, args):
            """Read the member (a reference, counted where numba's runtime counts: see _view_codegen)."""
            value = getattr(cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0]), name)
            return impl_ret_borrowed(context, builder, sig.return_type, value)

        return typeof(view)(view), codegen

    return read


_view_ctx = _member("ctx", lambda view: view.ctx)  # the view's context (inside this module only)
_view_seat = _member("seat", lambda view: types.int64)
_view_code = _member("code", lambda view: types.int64)

_OVERLOAD = {"jit_options": {"_nrt": False, "no_cfunc_wrapper": True}}


def _method_source(args, checks, count=None) -> str:
    """``_impl(view, *args)``: each argument checked against its range (:data:`CHECKS`), a base decision's
    count against its option arrays (:data:`BASE_COUNTS`), then ``fn``."""
    a = ", ".join(args)
    lines = [f"def _impl(view, {a}):",
             "    ctx = _view_ctx(view)",
             "    seat = _view_seat(view)"]
    second = args[1] if len(args) > 1 else "0"
    for i, x in enumerate(args[:len(checks)]):
        lines += [f"    lo, hi = _range{i}(ctx, seat, {args[0]})",
                  f"    if {x} < lo or {x} > hi:",
                  f"        _refuse{i}(_view_code(view), {args[0]}, {second}, lo, hi)"]
    if count is not None:
        where, arrays = count
        lengths = [f"len({args[i]})" for i in arrays]
        lines += [f"    length = {lengths[0] if len(lengths) == 1 else 'min(' + ', '.join(lengths) + ')'}",
                  f"    if {args[where]} < 0 or {args[where]} > length:",
                  f"        _refuse_count(_view_code(view), {args[where]}, length)"]
    lines += [f"    return fn(ctx, seat, {a})",
              f"def _typing(view, {a}):",
              "    return _impl"]
    return "\n".join(lines) + "\n"


def _register(name, fn, args, checks=(), method=False, count=None):
    """``view.<name>`` (a property) or ``view.<name>(*args)`` (a method: with arguments, or ``method``) on
    :class:`ViewType`; ``checks``: each argument's (range, refusal); ``count``: a base decision's count
    check (:data:`BASE_COUNTS`)."""
    if not args and not method:
        @overload_attribute(ViewType, name, **_OVERLOAD)
        def _prop(view):
            """The property's implementation."""
            return lambda view: fn(_view_ctx(view), _view_seat(view))
        return
    if not args:
        @overload_method(ViewType, name, **_OVERLOAD)
        def _call(view):
            """The method's implementation (no arguments)."""
            return lambda view: fn(_view_ctx(view), _view_seat(view))
        return
    # __name__: the functions are this module's (sim.kernel.custom tells the kernel's from the user's by it)
    env = {"__name__": __name__, "fn": fn, "_view_ctx": _view_ctx, "_view_seat": _view_seat,
           "_view_code": _view_code}
    for i, (rng, refuse) in enumerate(checks):
        env[f"_range{i}"], env[f"_refuse{i}"] = rng, refuse
    if count is not None:
        env["_refuse_count"] = _count_refuser(name)
    exec(_method_source(args, checks, count), env)  # noqa: S102 - a fixed template: numba needs the arguments spelled out
    overload_method(ViewType, name, **_OVERLOAD)(env["_typing"])


for _name, (_fn, _args) in VIEW_API.items():
    _register(_name, _fn, _args, CHECKS.get(_name, ()))


# --- the base strategy's own decisions: view.base_<decision>(...) -------------------------------
# Each is a method, called with the decision's options as the kernel passes them
# (``view.base_token(choices, n)``), or with none (``view.base_rest()``).
def _base_decisions() -> dict:
    """``base_<decision>`` -> (the built-in decision as ``f(ctx, seat, ...)``, its option arguments)."""
    from sim.kernel import strategy as builtin

    out = {}
    for name in DECISIONS:
        fn = getattr(builtin, name)
        if name == "setup_level2_henchmen":  # (ctx, players, k, out): seat 0 decides for the table
            fn = _seat_zero(fn)
        out[f"base_{name}"] = (fn, SIGNATURES[name])
    return out


def _seat_zero(fn):
    """``fn(ctx, players, k, out)`` as ``f(ctx, seat, players, k, out)``."""
    @jit
    def call(ctx, seat, players, k, out):
        """The built-in decision, seat 0 deciding."""
        return fn(ctx, players, k, out)

    return call


BASE_API = _base_decisions()

# A base decision reads ``array[:count]`` of the options it is given without bounds checks: its count
# may not pass the arrays (``view.base_token(choices, n + 5)``). base method -> (the count's position,
# the positions of the option arrays it counts).
BASE_COUNTS = {f"base_{name}": counts for name, counts in OPTION_COUNTS.items()}


def base_count_text(code, name: str, count, length) -> str:
    """The refusal of ``view.<name>(...)`` whose count argument ``count`` is not 0 to ``length`` (the
    shortest of the option arrays it counts), asked by decision ``code`` (-1: none)."""
    args = BASE_API[name][1]
    where, arrays = BASE_COUNTS[name]
    shown = ", ".join(str(count) if i == where else a for i, a in enumerate(args))
    decision = DECISIONS[code] if code >= 0 else ""
    what = "the options in " + " and ".join(args[i] for i in arrays)
    return VIEW_REFUSED + view_argument_text(decision, name, shown, args[where], 0, length, what)


def _count_refuser(name: str):
    """``refuse(code, count, length)``: :func:`base_count_text` raised as a ValueError, compiled (with
    numba's runtime, which builds the text: it runs only to raise)."""
    args = BASE_API[name][1]
    where, arrays = BASE_COUNTS[name]
    head = tuple(str(a) for a in args)
    what = "the options in " + " and ".join(args[i] for i in arrays)

    def refuse(code, count, length):
        """Raise the refusal."""
        shown = ""
        for i in range(len(head)):
            shown += (", " if i else "") + (str(count) if i == where else head[i])
        decision = DECISIONS[code] if code >= 0 else ""
        raise ValueError(VIEW_REFUSED + _argument_text(decision, name, shown, args[where], 0, length, what))

    return njit(**_RAISE_OPTIONS)(refuse)


for _name, (_fn, _args) in BASE_API.items():
    _register(_name, _fn, _args, method=True, count=BASE_COUNTS.get(_name))


def uncalled(name: str) -> str:
    """The refusal of method ``view.<name>`` read as a value, the call forgotten (``if view.base_rest:``,
    which a bound method, always true, would answer silently): compiled, numba refuses to type it and
    sim.kernel.custom.compile_failure says this; plain Python, :class:`_BaseMethod` raises it."""
    args = (VIEW_API.get(name) or BASE_API.get(name) or (None, ("...",)))[1]
    return f"view.{name} is a method, not a value: call it, view.{name}({', '.join(args)})"


# --- plain Python (NUMBA_DISABLE_JIT=1): the same attributes ------------------------------------
class KernelView:
    """The view as a plain object (the kernel running as Python); same attributes as compiled."""

    __slots__ = ("_ctx", "_seat", "_code")

    def __init__(self, ctx, seat, code=-1):
        """A view of ``ctx`` for ``seat``, asked decision ``code`` (-1: none)."""
        self._ctx = ctx
        self._seat = int(seat)
        self._code = int(code)


def _refuse_plain(code, name: str, position: int, args: tuple, lo: int, hi: int):
    """The compiled refusal (:func:`_refuser`), as plain Python: the same ValueError, the same words."""
    param, what = VIEW_API[name][1][position], VIEW_INDEX_KINDS[VIEW_INDEXES[name][position]]
    decision = DECISIONS[code] if code >= 0 else ""
    raise ValueError(VIEW_REFUSED + view_argument_text(decision, name, ", ".join(str(a) for a in args), param,
                                                       int(lo), int(hi), what))


class _BaseMethod:
    """``view.base_<decision>`` as plain Python: callable as compiled; read as true or false, or compared,
    refused (a bound method is always true: ``if view.base_rest:`` would silently rest)."""

    __slots__ = ("_call", "_name")

    def __init__(self, call, name):
        """The base strategy's decision ``call``, read through the view as ``name``."""
        self._call, self._name = call, name

    def __call__(self, *args):
        """The base strategy's answer."""
        return self._call(*args)

    def _refuse(self, *_):
        """Refuse the method used as a value (it was not called)."""
        raise TypeError(uncalled(self._name))

    __bool__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __int__ = __index__ = __float__ = _refuse
    __hash__ = None


def _python_attribute(name, fn, args, ranges=(), method=False):
    """A property (no arguments) or a method calling ``fn(ctx, seat, *args)``, its arguments checked
    against ``ranges`` (each one's range function, as :data:`CHECKS`); ``method``: a base decision."""
    if not args and not method:
        return property(lambda self: fn(self._ctx, self._seat))

    def call(self, *a):
        """The method: each argument checked against its range, then ``fn``."""
        for i, rng in enumerate(ranges):
            lo, hi = rng(self._ctx, self._seat, a[0])
            if not lo <= a[i] <= hi:
                _refuse_plain(self._code, name, i, a, lo, hi)
        return fn(self._ctx, self._seat, *a)

    if not method:
        return call
    count = BASE_COUNTS.get(name)

    def base(self, *a):
        """The base decision: its count checked against its option arrays, then ``fn``."""
        if count is not None and len(a) == len(args):
            where, arrays = count
            length = min(len(a[i]) for i in arrays)
            if not 0 <= a[where] <= length:
                raise ValueError(base_count_text(self._code, name, a[where], length))
        return fn(self._ctx, self._seat, *a)

    return property(lambda self: _BaseMethod(lambda *a: base(self, *a), name))


def python_attributes(value=lambda f: f) -> dict:
    """Every attribute of the view as plain Python (:class:`KernelView`'s), the kernel's functions
    given by ``value`` (``sim.twin``: their plain clones)."""
    out = {}
    for name, (fn, args) in VIEW_API.items():
        ranges = tuple(value(rng) for rng, _ in CHECKS.get(name, ()))
        out[name] = _python_attribute(name, value(fn), args, ranges)
    for name, (fn, args) in BASE_API.items():
        out[name] = _python_attribute(name, value(fn), args, method=True)
    return out


for _name, _attribute in python_attributes().items():
    setattr(KernelView, _name, _attribute)

make_view = KernelView if config.DISABLE_JIT else _make_view
decision_view = KernelView if config.DISABLE_JIT else _make_decision_view
