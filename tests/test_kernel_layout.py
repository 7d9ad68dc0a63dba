"""The kernel's data layout: every table mirrors the reference's dataclasses, and the
derived offsets never overlap (with bounds checks off, an overlap would silently
overwrite the next field)."""

from dataclasses import fields

import numpy as np

from sim.content import Content
from sim.kernel import layout
from sim.kernel.decks import work
from sim.rules.game import GameRecord
from sim.rules.state import GameState, Player, Stats
from tests.kernel_support import content_and_pack

# GameState fields that are machinery or kept elsewhere, not board state
NOT_MIRRORED = {"content", "settings", "stats", "rng", "strategies", "trace"}


def _names(table):
    return [f.name for f in table if f.name]


def test_state_tables_mirror_game_state():
    mirrored = _names(layout.STATE) + _names(layout.REGIONS)
    assert len(mirrored) == len(set(mirrored))
    assert set(mirrored) == {f.name for f in fields(GameState)} - NOT_MIRRORED


def test_player_table_mirrors_player():
    names = _names(layout.PLAYER)
    assert len(names) == len(set(names))
    assert set(names) == {f.name for f in fields(Player)} - {"seat"}  # the seat is the block's index


def test_stats_and_row_mirror_stats_and_game_record():
    assert layout.STAT_NAMES == tuple(f.name for f in fields(Stats))
    record = [f.name for f in fields(GameRecord)]
    assert set(layout.ROW_TEXT) <= set(record)  # the text columns exist, and are rebuilt from blocks
    assert list(layout.ROW_FIELDS) == [n for n in record if n not in layout.ROW_TEXT]
    assert {name for name, _ in layout.ROW_BLOCKS} <= set(layout.ROW_TEXT)
    # every counter reaches the row, each in its own column
    stat_of_row = {layout.ROW_STAT_OF.get(n, n) for n in layout.ROW_FIELDS}
    assert set(layout.STAT_NAMES) <= stat_of_row
    assert len(set(layout.ROW_STAT_ROWS.tolist())) == len(layout.STAT_NAMES) == len(layout.ROW_STAT_SRC)
    for row, src in zip(layout.ROW_STAT_ROWS, layout.ROW_STAT_SRC, strict=True):
        stat = layout.STAT_NAMES[src - layout.S_STATS]
        assert layout.ROW_STAT_OF.get(layout.ROW_FIELDS[row], layout.ROW_FIELDS[row]) == stat


def test_bundle_lists_content_arrays_with_their_dimensions():
    c, pk = content_and_pack()
    content_fields = {f.name for f in fields(Content)}
    assert pk._fields == tuple(name for name, _, _ in layout.BUNDLE)
    for name, dtype, ndim in layout.BUNDLE:
        a = getattr(pk, name)
        assert (a.ndim, str(a.dtype), a.flags.c_contiguous) == (ndim, dtype, True), name
        if name in content_fields:
            assert np.array_equal(a, np.asarray(getattr(c, name))), name


def _spans(pk):
    """(start, end, name) of every slot the tables give out, scalars and regions."""
    out = [(layout.OFFSETS[f.const], layout.OFFSETS[f.const] + f.size, f.const) for f in layout.STATE]
    out.append((layout.S_STATS, layout.N_SCALARS, "stats"))
    for f in layout.REGIONS:
        i = layout.OFFSETS[f.const]
        out.append((int(pk.lay[i]), int(pk.lay[i] + pk.region_size[i]), f.const))
    return sorted(out)


def test_regions_tile_the_state_vector_without_overlap():
    _, pk = content_and_pack()
    spans = _spans(pk)
    assert spans[0][0] == 0
    for (a0, a1, a), (b0, _b1, b) in zip(spans, spans[1:], strict=False):
        assert a0 <= a1 == b0, f"{a} [{a0}, {a1}) and {b} start {b0}"
    assert spans[-1][1] == pk.lay[layout.L_SIZE] == layout.new_state(pk).shape[0]


def test_player_block_fields_do_not_overlap():
    _, pk = content_and_pack()
    stride = int(pk.lay[layout.L_PSTRIDE])
    slots = []
    for f in layout.PLAYER:
        n = f.size if isinstance(f.size, int) else stride - layout.OFFSETS[f.const]
        slots += [(layout.OFFSETS[f.const] + k, f.const) for k in range(n)]
        if f.count:
            slots.append((layout.OFFSETS[f.count], f.count))
    assert sorted(s for s, _ in slots) == list(range(stride))
    assert pk.lay[layout.L_PLAYERS + 0] + 6 * stride <= pk.lay[layout.L_SIZE]


def test_scratch_regions_come_from_the_table():
    c, pk = content_and_pack()
    env = layout.sizes(c)
    st = layout.new_state(pk)
    plain_work = getattr(work, "py_func", work)  # the compiled one may only be inlined
    for f in layout.REGIONS:
        if f.kind == "scratch":
            view = plain_work(pk, st, layout.OFFSETS[f.const])
            assert view.shape == (layout.shape(f.size, env),), f.const


def test_row_columns_by_name():
    c, pk = content_and_pack()
    rows = np.arange(3 * layout.row_width(pk)).reshape(3, -1)
    cols = layout.row_columns(rows, c.n_henchmen)
    assert list(cols)[: len(layout.ROW_FIELDS)] == list(layout.ROW_FIELDS)
    assert cols["seed"].tolist() == rows[:, layout.R_SEED].tolist()
    assert cols["top_secret_played"].tolist() == rows[:, layout.N_ROW - 1].tolist()
    assert cols["henchman_levels"].shape == (3, c.n_henchmen)
    assert cols["characters"][:, -1].tolist() == rows[:, -1].tolist()


def test_every_kernel_function_says_what_it_does():
    import ast
    from pathlib import Path

    import sim.kernel

    missing = []
    for path in sorted(Path(sim.kernel.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and not ast.get_docstring(node):
                missing.append(f"{path.name}:{node.lineno} {node.name}")
    assert not missing, "kernel functions without a docstring: " + ", ".join(missing)


def _kernel_trees():
    import ast
    from pathlib import Path

    import sim.kernel

    for path in sorted(Path(sim.kernel.__file__).parent.glob("*.py")):
        yield path.name, ast.parse(path.read_text())


def test_kernel_imports_no_strategies_and_no_private_rules_names():
    import ast

    bad = []
    for name, tree in _kernel_trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                bad += [f"{name}: import {a.name}" for a in node.names if a.name.split(".")[0] == "strategies"]
            elif isinstance(node, ast.ImportFrom) and node.module:
                if node.module.split(".")[0] == "strategies":
                    bad.append(f"{name}: from {node.module}")
                if node.module.startswith("sim.rules"):
                    bad += [f"{name}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert not bad, bad


def test_only_the_strategy_module_looks_at_the_strategy_id():
    import ast

    readers = []
    for name, tree in _kernel_trees():
        if name in ("strategy.py", "layout.py", "batch.py", "game.py", "packref.py", "__init__.py"):
            continue  # the decisions; building the vector; handing it to the context
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "sid":
                readers.append(f"{name}:{node.lineno}")
            if isinstance(node, ast.Name) and node.id in ("sid", "RANDOM", "HEURISTIC"):
                readers.append(f"{name}:{node.lineno}")
    assert not readers, "engine code branches on the strategy id at " + ", ".join(readers)
