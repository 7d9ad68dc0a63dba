"""Session set-up shared by every test file."""


def pytest_configure(config):
    """With several test processes (pytest-xdist's ``-n``): compile the kernel into the on-disk cache once,
    here, before they start. Each process would otherwise find the cache empty and compile the whole kernel
    itself, at the same time as the others (about 60 s of both cores each on the 2-core machine). Nothing is
    compiled when the cache already holds this code's kernel, without JIT, or in a single test process
    (a run of a few tests that never plays a game pays nothing)."""
    if hasattr(config, "workerinput"):  # a test process of xdist: the controller has done it
        return
    option = config.option
    if getattr(option, "dist", "no") == "no" or len(getattr(option, "tx", None) or ()) < 2 or option.collectonly:
        return
    from numba import config as numba_config

    if numba_config.DISABLE_JIT:
        return
    from sim.kernel.batch import _compile_cold_in_helpers

    _compile_cold_in_helpers()
