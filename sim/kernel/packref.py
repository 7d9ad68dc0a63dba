"""The content bundle as one numba StructRef: compiled code passes a single pointer.

A namedtuple of ~80 arrays (``sim.kernel.layout.Pack``) is a fine Python object,
but every jitted function taking it compiles ~1.5 s slower (numba flattens the
tuple into hundreds of arguments). :func:`kernel_pack` copies a ``Pack`` into a
:class:`PackRef` with the same attribute names, so kernel code reads
``pk.villain_advance`` either way. Under ``NUMBA_DISABLE_JIT=1`` the namedtuple
itself is used. This file's field list mirrors ``layout.Pack`` (a test checks it).
"""

from __future__ import annotations

import hashlib

from llvmlite import ir
from numba import config, njit, types
from numba.core import cgutils, imputils
from numba.core.datamodel import default_manager, models
from numba.core.extending import infer_getattr, lower_getattr_generic, lower_setattr_generic
from numba.core.typing.templates import AttributeTemplate
from numba.experimental import structref

from sim.jit import JIT_OPTIONS


class PackType(types.StructRef):
    """numba type of the content bundle."""

    def __init__(self, fields):
        super().__init__(fields)
        # numba names a StructRef type after all its fields (~8 KB here), and that name
        # is mangled into the symbol of every kernel function and call: a short name
        # that still identifies the fields keeps the compiled code's symbols small
        digest = hashlib.sha256(repr(self._fields).encode()).hexdigest()[:16]
        self.name = f"PackType_{digest}"

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


# Registered by hand rather than with ``structref.register``: numba's attribute getter asks
# the runtime (NRT) for the payload pointer, and the kernel is compiled without the runtime
# (``sim.jit.KERNEL_OPTIONS``). The payload pointer is the fourth word of numba's MemInfo
# (``refct, dtor, dtor_info, data, ...``, as in ``numba.core.runtime.nrtdynmod``).
default_manager.register(PackType, models.StructRefModel)
_WORD = ir.IntType(64)
_PTR = ir.IntType(8).as_pointer()
_MEMINFO = ir.LiteralStructType([_WORD, _PTR, _PTR, _PTR, _WORD])


def _payload(context, builder, typ, val):
    ref = cgutils.create_struct_proxy(typ)(context, builder, value=val)
    mi = builder.bitcast(ref.meminfo, _MEMINFO.as_pointer())
    data = builder.load(cgutils.gep_inbounds(builder, mi, 0, 3))
    valtype = typ.get_data_type()
    alloc = context.data_model_manager[valtype].get_value_type()
    return cgutils.create_struct_proxy(valtype)(context, builder, ref=builder.bitcast(data, alloc.as_pointer()))


@infer_getattr
class _PackAttributes(AttributeTemplate):
    key = PackType

    def generic_resolve(self, typ, attr):
        if attr in typ.field_dict:
            return typ.field_dict[attr]


@lower_getattr_generic(PackType)
def _pack_getattr(context, builder, typ, val, attr):
    value = getattr(_payload(context, builder, typ, val), attr)
    return imputils.impl_ret_borrowed(context, builder, typ.field_dict[attr], value)


@lower_setattr_generic(PackType)
def _pack_setattr(context, builder, sig, args, attr):
    """As numba's StructRef setter (used by :func:`_to_ref`, compiled with the runtime)."""
    inst_type, val_type = sig.args
    instance, val = args
    payload = _payload(context, builder, inst_type, instance)
    casted = context.cast(builder, val, val_type, inst_type.field_dict[attr])
    old = getattr(payload, attr)
    context.nrt.incref(builder, val_type, casted)
    context.nrt.decref(builder, val_type, old)
    setattr(payload, attr, casted)


class PackRef(structref.StructRefProxy):
    """Python handle of a compiled content bundle (read it through the namedtuple instead)."""


structref.define_boxing(PackType, PackRef)

FIELDS = (
    ("die_success", types.Array(types.int64, 2, "C")),
    ("die_injury", types.Array(types.int64, 2, "C")),
    ("die_heal", types.Array(types.int64, 2, "C")),
    ("bag_dice", types.Array(types.int64, 1, "C")),
    ("intel_token_type", types.Array(types.int64, 1, "C")),
    ("villain_advance", types.Array(types.int64, 1, "C")),
    ("villain_injury", types.Array(types.int64, 1, "C")),
    ("villain_close_city", types.Array(types.int64, 1, "C")),
    ("villain_add_intel", types.Array(types.int64, 2, "C")),
    ("villain_remove_region", types.Array(types.int64, 1, "C")),
    ("lobo_intel_required", types.Array(types.int64, 2, "C")),
    ("henchman_option_skill", types.Array(types.int64, 3, "C")),
    ("henchman_option_modifier", types.Array(types.int64, 3, "C")),
    ("henchman_option_successes", types.Array(types.int64, 3, "C")),
    ("henchman_autopass", types.Array(types.int64, 2, "C")),
    ("character_skills", types.Array(types.int64, 2, "C")),
    ("character_resolve_start", types.Array(types.int64, 1, "C")),
    ("character_resolve_max", types.Array(types.int64, 1, "C")),
    ("character_life", types.Array(types.int64, 1, "C")),
    ("character_advanced", types.Array(types.int64, 2, "C")),
    ("character_start_space", types.Array(types.int64, 1, "C")),
    ("character_start_un", types.Array(types.int64, 1, "C")),
    ("character_watch", types.Array(types.int64, 1, "C")),
    ("character_gives_un", types.Array(types.int64, 1, "C")),
    ("character_reduced_resolve_cut", types.Array(types.int64, 1, "C")),
    ("setup_board_intel", types.Array(types.int64, 1, "C")),
    ("setup_extra_un", types.Array(types.int64, 1, "C")),
    ("setup_extra_top_secret", types.Array(types.int64, 1, "C")),
    ("setup_extra_choice", types.Array(types.int64, 1, "C")),
    ("setup_giver_extra_un", types.Array(types.int64, 1, "C")),
    ("setup_giver_extra_top_secret", types.Array(types.int64, 1, "C")),
    ("setup_giver_choice_max_un", types.Array(types.int64, 1, "C")),
    ("setup_henchmen_level2", types.Array(types.int64, 1, "C")),
    ("setup_remove_injury_cards", types.Array(types.int64, 1, "C")),
    ("setup_remove_minus_one", types.Array(types.int64, 1, "C")),
    ("setup_remove_random_plus_one", types.Array(types.int64, 1, "C")),
    ("setup_resolve_cut", types.Array(types.int64, 1, "C")),
    ("setup_resolve_cut_reduced", types.Array(types.int64, 1, "C")),
    ("setup_location_target", types.Array(types.int64, 1, "C")),
    ("setup_overflow_limit", types.Array(types.int64, 1, "C")),
    ("setup_mission_resolve", types.Array(types.int64, 1, "C")),
    ("setup_rest_roll_die", types.Array(types.int64, 1, "C")),
    ("setup_lineup", types.Array(types.int64, 2, "C")),
    ("easier_extra_choice", types.Array(types.int64, 1, "C")),
    ("easier_extra_top_secret", types.Array(types.int64, 1, "C")),
    ("easier_henchmen_level1", types.Array(types.int64, 1, "C")),
    ("top_secret_effect", types.Array(types.int64, 1, "C")),
    ("encounter_deck", types.Array(types.int64, 1, "C")),
    ("encounter_option_skill", types.Array(types.int64, 3, "C")),
    ("encounter_option_modifier", types.Array(types.int64, 3, "C")),
    ("encounter_option_successes", types.Array(types.int64, 3, "C")),
    ("encounter_gamble", types.Array(types.int64, 2, "C")),
    ("encounter_autopass", types.Array(types.int64, 2, "C")),
    ("encounter_reward", types.Array(types.int64, 2, "C")),
    ("encounter_reward_amount", types.Array(types.int64, 2, "C")),
    ("encounter_reward_skill", types.Array(types.int64, 2, "C")),
    ("encounter_penalty", types.Array(types.int64, 2, "C")),
    ("encounter_penalty_amount", types.Array(types.int64, 2, "C")),
    ("encounter_penalty_skill", types.Array(types.int64, 2, "C")),
    ("encounter_no_advance", types.Array(types.int64, 2, "C")),
    ("fate_city", types.Array(types.int64, 1, "C")),
    ("fate_rank", types.Array(types.int64, 1, "C")),
    ("fate_suit", types.Array(types.int64, 1, "C")),
    ("space_kind", types.Array(types.int64, 1, "C")),
    ("space_deck", types.Array(types.int64, 1, "C")),
    ("space_ussr", types.Array(types.int64, 1, "C")),
    ("space_airport", types.Array(types.int64, 1, "C")),
    ("space_red_airport", types.Array(types.int64, 1, "C")),
    ("space_train", types.Array(types.int64, 1, "C")),
    ("hop_distance", types.Array(types.int64, 2, "C")),
    ("steps_start", types.Array(types.int64, 1, "C")),
    ("steps_list", types.Array(types.int64, 1, "C")),
    ("autopass_counts", types.Array(types.int64, 1, "C")),
    ("deck_base", types.Array(types.int64, 1, "C")),
    ("scal", types.Array(types.int64, 1, "C")),
    ("lay", types.Array(types.int64, 1, "C")),
    ("pass_table", types.Array(types.float64, 3, "C")),
    ("walk_start", types.Array(types.int64, 1, "C")),
    ("walk_dest", types.Array(types.int64, 1, "C")),
    ("walk_mp", types.Array(types.int64, 1, "C")),
    ("airport_spaces", types.Array(types.int64, 1, "C")),
    ("airport_reach", types.Array(types.int64, 2, "C")),
    ("un_dests", types.Array(types.int64, 1, "C")),
    ("airports_by_distance", types.Array(types.int64, 2, "C")),
    ("airports_near_start", types.Array(types.int64, 1, "C")),
    ("airports_near", types.Array(types.int64, 1, "C")),
)
PACK_TYPE = PackType(list(FIELDS))


@njit(**JIT_OPTIONS)
def _to_ref(nt):
    p = structref.new(PACK_TYPE)
    p.die_success = nt.die_success
    p.die_injury = nt.die_injury
    p.die_heal = nt.die_heal
    p.bag_dice = nt.bag_dice
    p.intel_token_type = nt.intel_token_type
    p.villain_advance = nt.villain_advance
    p.villain_injury = nt.villain_injury
    p.villain_close_city = nt.villain_close_city
    p.villain_add_intel = nt.villain_add_intel
    p.villain_remove_region = nt.villain_remove_region
    p.lobo_intel_required = nt.lobo_intel_required
    p.henchman_option_skill = nt.henchman_option_skill
    p.henchman_option_modifier = nt.henchman_option_modifier
    p.henchman_option_successes = nt.henchman_option_successes
    p.henchman_autopass = nt.henchman_autopass
    p.character_skills = nt.character_skills
    p.character_resolve_start = nt.character_resolve_start
    p.character_resolve_max = nt.character_resolve_max
    p.character_life = nt.character_life
    p.character_advanced = nt.character_advanced
    p.character_start_space = nt.character_start_space
    p.character_start_un = nt.character_start_un
    p.character_watch = nt.character_watch
    p.character_gives_un = nt.character_gives_un
    p.character_reduced_resolve_cut = nt.character_reduced_resolve_cut
    p.setup_board_intel = nt.setup_board_intel
    p.setup_extra_un = nt.setup_extra_un
    p.setup_extra_top_secret = nt.setup_extra_top_secret
    p.setup_extra_choice = nt.setup_extra_choice
    p.setup_giver_extra_un = nt.setup_giver_extra_un
    p.setup_giver_extra_top_secret = nt.setup_giver_extra_top_secret
    p.setup_giver_choice_max_un = nt.setup_giver_choice_max_un
    p.setup_henchmen_level2 = nt.setup_henchmen_level2
    p.setup_remove_injury_cards = nt.setup_remove_injury_cards
    p.setup_remove_minus_one = nt.setup_remove_minus_one
    p.setup_remove_random_plus_one = nt.setup_remove_random_plus_one
    p.setup_resolve_cut = nt.setup_resolve_cut
    p.setup_resolve_cut_reduced = nt.setup_resolve_cut_reduced
    p.setup_location_target = nt.setup_location_target
    p.setup_overflow_limit = nt.setup_overflow_limit
    p.setup_mission_resolve = nt.setup_mission_resolve
    p.setup_rest_roll_die = nt.setup_rest_roll_die
    p.setup_lineup = nt.setup_lineup
    p.easier_extra_choice = nt.easier_extra_choice
    p.easier_extra_top_secret = nt.easier_extra_top_secret
    p.easier_henchmen_level1 = nt.easier_henchmen_level1
    p.top_secret_effect = nt.top_secret_effect
    p.encounter_deck = nt.encounter_deck
    p.encounter_option_skill = nt.encounter_option_skill
    p.encounter_option_modifier = nt.encounter_option_modifier
    p.encounter_option_successes = nt.encounter_option_successes
    p.encounter_gamble = nt.encounter_gamble
    p.encounter_autopass = nt.encounter_autopass
    p.encounter_reward = nt.encounter_reward
    p.encounter_reward_amount = nt.encounter_reward_amount
    p.encounter_reward_skill = nt.encounter_reward_skill
    p.encounter_penalty = nt.encounter_penalty
    p.encounter_penalty_amount = nt.encounter_penalty_amount
    p.encounter_penalty_skill = nt.encounter_penalty_skill
    p.encounter_no_advance = nt.encounter_no_advance
    p.fate_city = nt.fate_city
    p.fate_rank = nt.fate_rank
    p.fate_suit = nt.fate_suit
    p.space_kind = nt.space_kind
    p.space_deck = nt.space_deck
    p.space_ussr = nt.space_ussr
    p.space_airport = nt.space_airport
    p.space_red_airport = nt.space_red_airport
    p.space_train = nt.space_train
    p.hop_distance = nt.hop_distance
    p.steps_start = nt.steps_start
    p.steps_list = nt.steps_list
    p.autopass_counts = nt.autopass_counts
    p.deck_base = nt.deck_base
    p.scal = nt.scal
    p.lay = nt.lay
    p.pass_table = nt.pass_table
    p.walk_start = nt.walk_start
    p.walk_dest = nt.walk_dest
    p.walk_mp = nt.walk_mp
    p.airport_spaces = nt.airport_spaces
    p.airport_reach = nt.airport_reach
    p.un_dests = nt.un_dests
    p.airports_by_distance = nt.airports_by_distance
    p.airports_near_start = nt.airports_near_start
    p.airports_near = nt.airports_near
    return p


def kernel_pack(pk):
    """The bundle to hand to jitted kernel code: a PackRef (the namedtuple when JIT is off)."""
    if config.DISABLE_JIT:
        return pk
    return _to_ref(pk)
