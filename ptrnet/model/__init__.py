"""Models: the Ptr-Net and the Table 1 baselines, built from a :class:`ModelConfig`.

Importing this package stays light (no torch); :func:`build_model` imports the networks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ptrnet.model.config import ModelConfig

if TYPE_CHECKING:
    from ptrnet.model.heavy import HeavyPointer
    from ptrnet.model.light import LightPointer
    from ptrnet.model.pointer import EncoderDecoder
    from ptrnet.model.route import RoutePointer

__all__ = ["ModelConfig", "build_model"]


def build_model(
    config: ModelConfig,
) -> EncoderDecoder | HeavyPointer | LightPointer | RoutePointer:
    """The network ``config.kind`` (and, for the pointer, ``config.decoder``) names, freshly
    initialised per ``config.init``. Every one decodes through the same ``encode`` / ``step`` /
    ``forward`` interface (:mod:`ptrnet.decoding`)."""
    from ptrnet.model.baselines import AttentionSeq2Seq, Seq2Seq
    from ptrnet.model.pointer import PointerNetwork

    if config.decoder == "heavy":
        from ptrnet.model.heavy import HeavyPointer

        return HeavyPointer(config)
    if config.decoder == "light":
        from ptrnet.model.light import LightPointer

        return LightPointer(config)
    if config.decoder == "route":
        from ptrnet.model.route import RoutePointer

        return RoutePointer(config)

    classes = {"pointer": PointerNetwork, "seq2seq": Seq2Seq, "attention": AttentionSeq2Seq}
    return classes[config.kind](config)
