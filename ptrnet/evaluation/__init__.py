"""Evaluation: dataset-level scoring with the paper's metrics (:mod:`ptrnet.evaluation.score`)."""
