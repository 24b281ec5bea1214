"""The length metrics TSP and vehicle routing share (ptrnet.tasks.lengths), by hand."""

import math

import numpy as np

from ptrnet.tasks.lengths import length_metrics, relative_gap


def test_the_gap_is_relative_and_a_zero_reference_gives_zero_or_infinity():
    assert relative_gap(3.0, 2.0) == 0.5
    assert relative_gap(0.0, 0.0) == 0.0
    assert relative_gap(1e-9, 0.0) == math.inf


def test_invalid_answers_count_against_the_rate_and_nowhere_else():
    points = [np.zeros((2, 1)), np.zeros((2, 1)), np.zeros((2, 1))]
    refs = [np.array([2.0]), np.array([4.0]), np.array([1.0])]
    preds = [np.array([3.0]), np.array([5.0]), np.array([-1.0])]  # the last one invalid

    def valid(_, answer):
        return bool(answer[0] >= 0)

    def length(_, answer):
        return float(answer[0])

    got = length_metrics(points, refs, preds, valid, length)
    assert got == {"valid_rate": 2 / 3, "mean_length": 4.0, "mean_gap": 0.375, "count": 3}
    none = length_metrics(points[2:], refs[2:], preds[2:], valid, length)
    assert none["valid_rate"] == 0 and math.isnan(none["mean_length"])
    assert math.isnan(none["mean_gap"])
