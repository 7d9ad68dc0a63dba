"""Game content: the data-driven pack (cards, board, characters) and its loader.

``load()`` reads the default pack (``DEFAULT_PACK``); ``load(path)`` a designer's
copy. ``load_raw`` + ``build`` let a caller patch the parsed data and rebuild.
"""

from sim.content.loader import (
           DEFAULT_PACK,
           UnprintedValueWarning,
           build,
           content_hash,
           load,
           load_raw,
           unprinted,
)
from sim.content.model import Content, ContentError

__all__ = ["DEFAULT_PACK", "Content", "ContentError", "UnprintedValueWarning", "build", "content_hash", "load", "load_raw",
           "unprinted"]
