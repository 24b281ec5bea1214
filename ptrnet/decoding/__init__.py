"""Decoding: how a trained model's outputs are chosen, apart from the model and the task.

* :mod:`ptrnet.decoding.options` -- :class:`DecodeOptions`, every choice of a decoding run,
  validated in one place (no torch: front ends import it freely);
* :mod:`ptrnet.decoding.decoder` -- the :class:`Decoder` interface the loop asks of any model;
* :mod:`ptrnet.decoding.search` -- the one autoregressive loop, every model's and strategy's;
* :mod:`ptrnet.decoding.pointer_decoder` -- the pointer models' decoder, the masked step
  distribution;
* :mod:`ptrnet.decoding.strategies`, :mod:`ptrnet.decoding.beam` -- the token choosers;
* :mod:`ptrnet.decoding.decode` -- :func:`decode` a batch, :func:`score_sequences`;
* :mod:`ptrnet.decoding.views`, :mod:`ptrnet.decoding.view_scores` -- multi-view decoding;
* :mod:`ptrnet.decoding.dataset` -- :func:`decode_outputs`, a whole dataset in batches, each
  output with its log-likelihood and step distributions from the one pass (:func:`decode_all`:
  the sequences alone).

The package itself imports nothing, so importing the options does not import torch.
"""
