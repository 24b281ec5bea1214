"""Decoding strategies (greedy, sampling, beam) in one shared loop, separate from the model."""

from ptrnet.decoding.decode import STRATEGIES, DecodeResult, decode, score_sequences
from ptrnet.decoding.search import masked_log_probs

__all__ = ["STRATEGIES", "DecodeResult", "decode", "masked_log_probs", "score_sequences"]
