"""Model configuration: one frozen, validated dataclass that is saved beside the weights."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from ptrnet.model.features import FEATURES, ROW_WIDTH, feature_dim
from ptrnet.quoting import quote

DEFAULT_HIDDEN = 256  # LSTM units (the paper: 256 or 512)
KINDS = ("pointer", "seq2seq", "attention")
INITS = ("paper", "default")
ENCODERS = ("lstm", "transformer")
#: The largest value of each size option: far above any model of the paper or the follow-up
#: work (hidden 128-512, 1-6 layers), below what would exhaust memory allocating it.
UPPER_BOUNDS = {
    "input_dim": 1024,
    "hidden": 8192,
    "layers": 64,
    "encoder_layers": 64,
    "heads": 1024,
    "decoder_layers": 64,
    "glimpses": 64,
}
DECODERS = ("lstm", "heavy", "light", "route")
#: Decoders whose state is the chosen set and the first input (:func:`ptrnet.model.heavy.advance`):
#: they output permutations, and can rebuild a path between two given inputs (RRC).
PERMUTATION_DECODERS = ("heavy", "light")
#: Decoders on the Transformer set encoder (each has its own attention; no LSTM glimpses).
SET_DECODERS = (*PERMUTATION_DECODERS, "route")


@dataclass(frozen=True)
class ModelConfig:
    """What rebuilds a model.

    Attributes:
        kind: ``pointer`` (Ptr-Net, Sec. 2.3), ``seq2seq`` (LSTM baseline, Sec. 2.1) or
            ``attention`` (LSTM + content-based input attention baseline, Sec. 2.2).
        input_dim: coordinates per input element (1 for sort, 2 for the geometric tasks).
        hidden: LSTM units d, the same for encoder and decoder (paper: 256 or 512).
        layers: stacked LSTM layers on each side (paper: 1).
        init: ``paper`` = uniform(-0.08, 0.08) on every parameter (Sec. 4); ``default`` = PyTorch's.
        max_n: size of the fixed output vocabulary minus the end class, required by the
            baselines and rejected for ``pointer`` (a Ptr-Net has no fixed vocabulary).
        encoder: ``lstm`` (the paper) or ``transformer`` (self-attention without positional
            encoding, so invariant to the input order; Kool et al. 2019): ``pointer`` only.
        encoder_layers, heads: the Transformer encoder's layers and attention heads (``hidden``
            must divide by ``heads``); unused by the LSTM encoder.
        glimpses: attention glimpses that refine the pointer's query before it points (Bello et
            al. 2016, Sec. 3.1); 0 = the paper's pointer. ``pointer`` only.
        logit_clip: C > 0 clips the pointer's logits to C tanh(u) (Bello et al. 2016, Sec. A.2);
            0 = off (the paper). ``pointer`` only.
        decoder: ``lstm`` (the paper's pointer decoder) or ``heavy`` (LEHD, Luo et al. 2023: at
            every step ``decoder_layers`` self-attention layers re-read the remaining inputs;
            :mod:`ptrnet.model.heavy`) or ``light`` (Kool et al. 2019: one context query per step
            with one multi-head glimpse over keys computed once per batch;
            :mod:`ptrnet.model.light`) or ``route`` (the light decoder for vehicle routing: the
            depot revisited, the load left in the context; :mod:`ptrnet.model.route`). All
            three need the ``transformer`` encoder (``heavy``: its light encoder, e.g.
            ``encoder_layers`` = 1) and no glimpses (``light`` and ``route`` have their own);
            ``heavy`` and ``light`` a task whose output is a permutation of its inputs (checked
            with the task: ``RunConfig``), ``route`` the ``demand`` features.
        decoder_layers: the heavy decoder's self-attention layers; unused by the LSTM decoder.
        features: what the network reads of each row (:mod:`ptrnet.model.features`): ``raw``
            (the rows), ``capacity`` (rows (weight, value, capacity) of a knapsack that
            states its capacity, read as weight / capacity and value / the largest value;
            ``input_dim`` 3) or ``demand`` (rows (x, y, demand, capacity) of a routing
            instance, its depot first, read as x, y, demand / capacity and a depot flag;
            ``input_dim`` 4); ``capacity`` with the Ptr-Net's LSTM decoder, ``demand`` with it
            or the ``route`` decoder (which needs it).

    A checkpoint saved before these fields existed loads with their defaults: the paper's
    LSTM Ptr-Net.
    """

    kind: str = "pointer"
    input_dim: int = 2
    hidden: int = DEFAULT_HIDDEN
    layers: int = 1
    init: str = "paper"
    max_n: int | None = None
    encoder: str = "lstm"
    encoder_layers: int = 3
    heads: int = 8
    glimpses: int = 0
    logit_clip: float = 0.0
    decoder: str = "lstm"
    decoder_layers: int = 6
    features: str = "raw"

    @property
    def feature_dim(self) -> int:
        """Numbers per input element the network reads (:func:`features.feature_dim`)."""
        return feature_dim(self.features, self.input_dim)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(
                f"unknown model kind {quote(self.kind)}; choose from {', '.join(KINDS)}"
            )
        if self.init not in INITS:
            raise ValueError(f"unknown init {quote(self.init)}; choose from {', '.join(INITS)}")
        self._check_positive("input_dim", "hidden", "layers")
        self._check_pointer_options()
        self._check_features()
        if self.kind == "pointer":
            if self.max_n is not None:
                raise ValueError("max_n applies only to the seq2seq and attention baselines")
        elif not _is_int(self.max_n) or self.max_n < 1:
            raise ValueError(
                f"the {self.kind} baseline needs a positive integer max_n, got {quote(self.max_n)}"
            )

    def _check_positive(self, *names: str) -> None:
        """Raise ValueError unless each named field is a positive integer within its
        :data:`UPPER_BOUNDS` entry."""
        for name in names:
            value = getattr(self, name)
            if not _is_int(value) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {quote(value)}")
            if value > UPPER_BOUNDS[name]:
                raise ValueError(
                    f"{name} must be at most {UPPER_BOUNDS[name]:,} (far above any published "
                    f"model), got {quote(value)}"
                )

    def _check_pointer_options(self) -> None:
        if self.encoder not in ENCODERS:
            raise ValueError(
                f"unknown encoder {quote(self.encoder)}; choose from {', '.join(ENCODERS)}"
            )
        self._check_positive("encoder_layers", "heads", "decoder_layers")
        if self.encoder == "transformer" and self.hidden % self.heads:
            raise ValueError(f"hidden {self.hidden} must divide by heads {self.heads}")
        if not _is_int(self.glimpses) or not 0 <= self.glimpses <= UPPER_BOUNDS["glimpses"]:
            raise ValueError(
                f"glimpses must be an integer in 0..{UPPER_BOUNDS['glimpses']}, "
                f"got {quote(self.glimpses)}"
            )
        clip = self.logit_clip
        if isinstance(clip, bool) or not isinstance(clip, int | float) or not 0 <= clip < 1e6:
            raise ValueError(f"logit_clip must be 0 (off) or a positive number, got {quote(clip)}")
        changed = self.encoder != "lstm" or self.glimpses or self.logit_clip
        if (changed or self.decoder != "lstm") and self.kind != "pointer":
            raise ValueError(
                "encoder, decoder, glimpses and logit_clip apply to the pointer model only, "
                f"not to the {self.kind} baseline"
            )
        self._check_decoder()

    def _check_features(self) -> None:
        if self.features not in FEATURES:
            raise ValueError(
                f"unknown features {quote(self.features)}; choose from {', '.join(FEATURES)}"
            )
        width = ROW_WIDTH[self.features]
        if width is not None and self.input_dim != width:
            raise ValueError(
                f"features {self.features} read rows of {width} numbers, not input_dim "
                f"{self.input_dim}"
            )
        if self.decoder == "route" and self.features != "demand":
            raise ValueError(
                "the route decoder reads a routing instance's depot and demands: features "
                f"demand, not {self.features}"
            )
        decoders = {"raw": DECODERS, "capacity": ("lstm",), "demand": ("lstm", "route")}
        if self.features != "raw" and (
            self.kind != "pointer" or self.decoder not in decoders[self.features]
        ):
            raise ValueError(
                f"features {self.features} apply to the pointer model with the "
                f"{' or '.join(decoders[self.features])} decoder"
            )

    def _check_decoder(self) -> None:
        if self.decoder not in DECODERS:
            raise ValueError(
                f"unknown decoder {quote(self.decoder)}; choose from {', '.join(DECODERS)}"
            )
        if self.decoder not in SET_DECODERS:
            return
        if self.encoder != "transformer":
            raise ValueError(f"the {self.decoder} decoder needs the transformer encoder")
        if self.glimpses:
            raise ValueError(
                f"glimpses apply to the lstm decoder only, not to the {self.decoder} one"
            )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModelConfig:
        """Build from a dict (e.g. a checkpoint's). Raises ValueError naming unknown keys."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(map(str, set(d) - known))
        if unknown:
            raise ValueError(
                f"unknown model config keys: {quote(unknown)}; known: {', '.join(sorted(known))}"
            )
        return cls(**d)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict that :meth:`from_dict` turns back into an equal config."""
        return asdict(self)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
