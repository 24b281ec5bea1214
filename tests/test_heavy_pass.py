"""The heavy decoder's fast inference path (ptrnet.model.heavy_pass) against PyTorch's own
encoder layers (``HeavyPointer.fast = False``, the path it replaces at inference): the same
vectors, the same logits, and the same tours from the bundled TSP folder, greedy, beam and RRC."""

import numpy as np
import pytest
import torch

import ptrnet.model.heavy_pass as heavy_pass
from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.inference import load_model, predict
from ptrnet.model import ModelConfig, build_model
from ptrnet.model.heavy import HeavyPointer
from ptrnet.searches.rebuild import improve_tours_of
from ptrnet.searches.reconstruct import rebuild_paths
from ptrnet.tasks import SizeRange, get_task

torch.set_num_threads(1)
TSP = get_task("tsp")


def small_model(seed=0, layers=2, heads=2):
    torch.manual_seed(seed)
    config = ModelConfig(
        input_dim=2,
        hidden=16,
        encoder="transformer",
        encoder_layers=1,
        decoder="heavy",
        decoder_layers=layers,
        heads=heads,
    )
    return build_model(config).eval()


def folder_heavy_models(loaded):
    return [
        m
        for m in (loaded.model, *(route.model.model for route in loaded.routes))
        if isinstance(m, HeavyPointer)
    ]


@pytest.fixture(autouse=True)
def pass_on_every_row(monkeypatch):
    """The fast path on rows of any length (by default short rows keep the fused layers)."""
    monkeypatch.setattr(heavy_pass, "FAST_FROM", 0)


@pytest.fixture(scope="module")
def bundled():
    return load_model(None, TSP)


def set_fast(loaded, fast):
    for model in folder_heavy_models(loaded):
        model.fast = fast


@pytest.mark.parametrize("layers,heads", [(1, 1), (2, 2), (3, 4)])
def test_the_pass_computes_the_encoder_layers_function(layers, heads):
    model = small_model(layers=layers, heads=heads)
    x = torch.randn(5, 9, 16)
    with torch.no_grad():
        reference = model.decoder(x)  # (5, 9, 16), PyTorch's fused layers
        plain = heavy_pass.decoder_pass(model.decoder, x)
        cached = heavy_pass.decoder_pass(
            model.decoder, x, heavy_pass.first_layer_qkv(model.decoder, x[:, 2:])
        )
    torch.testing.assert_close(plain, reference, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(cached, reference, rtol=1e-5, atol=1e-5)


def test_chunks_of_rows_change_nothing(monkeypatch):
    model = small_model()
    x = torch.randn(7, 6, 16)
    with torch.no_grad():
        whole = heavy_pass.decoder_pass(model.decoder, x)
        monkeypatch.setattr(heavy_pass, "CHUNK_VECTORS", 12)  # chunks of 2 rows, one of 1
        chunked = heavy_pass.decoder_pass(model.decoder, x)
    assert torch.equal(whole, chunked)


def test_the_fast_path_stays_off_where_gradients_are_recorded():
    model = small_model()
    nodes = torch.randn(3, 6, 16)
    with torch.no_grad():
        assert model.node_qkv(nodes) is not None
    with torch.inference_mode():
        assert model.node_qkv(nodes) is not None
    with torch.enable_grad():
        assert model.node_qkv(nodes) is None  # training runs PyTorch's layers
    model.fast = False
    with torch.no_grad():
        assert model.node_qkv(nodes) is None


def test_fast_logits_equal_the_reference_logits_at_random_states():
    model, gen = small_model(seed=3), torch.Generator().manual_seed(0)
    rows, n = 6, 8
    nodes = torch.randn(rows, n, 16, generator=gen)
    real = torch.ones(rows, n, dtype=torch.bool)
    real[0, 6:] = False  # a shorter row: its pads are never pointed at
    chosen = torch.rand(rows, n + 1, generator=gen) < 0.4
    chosen[:, 0] = False
    chosen[0, 7:] = False
    first = torch.tensor([0, 1, 2, 3, 1, 8])
    last = torch.tensor([0, 4, 2, 5, 6, 8])
    chosen[torch.arange(rows), first] |= first > 0
    chosen[torch.arange(rows), last] |= last > 0
    with torch.no_grad():
        fast = model.logits(nodes, real, chosen, first, last, model.node_qkv(nodes))
        model.fast = False
        reference = model.logits(nodes, real, chosen, first, last)
    assert torch.equal(fast.isinf(), reference.isinf())
    torch.testing.assert_close(fast, reference, rtol=1e-5, atol=1e-5)


def test_beam_search_of_a_small_model_finds_the_same_tours():
    model, rng = small_model(seed=5), np.random.default_rng(2)
    batch = collate([rng.random((n, 2)) for n in (9, 7, 8)])
    options = DecodeOptions(strategy="beam", beam_width=3)
    fast = decode(model, TSP, batch, options)
    model.fast = False
    reference = decode(model, TSP, batch, options)
    for a, b in zip(fast.sequences, reference.sequences, strict=True):
        np.testing.assert_array_equal(a, b)


def assert_paths_agree(bundled, points) -> None:
    """The folder's greedy tours of ``points`` are the same on the fast path and the reference."""
    set_fast(bundled, True)
    fast = predict(bundled, TSP, points)
    set_fast(bundled, False)
    try:
        reference = predict(bundled, TSP, points)
    finally:
        set_fast(bundled, True)
    for a, b in zip(fast, reference, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n,count", [(30, 6), (60, 4), (100, 3), (200, 1)])
def test_the_bundled_folder_decodes_the_same_tours_greedily(bundled, n, count):
    points = TSP.generate(SizeRange(n, n), count, seed=41, stream=7)
    assert_paths_agree(bundled, points)


def test_the_default_mix_of_paths_decodes_the_same_tours(bundled, monkeypatch):
    monkeypatch.setattr(heavy_pass, "FAST_FROM", 40)  # rows of 40+ vectors op by op, the rest fused
    points = TSP.generate(SizeRange(100, 100), 2, seed=42, stream=7)
    assert_paths_agree(bundled, points)


def test_rrc_rebuilds_the_same_paths_and_tours(bundled):
    model = bundled.for_size(100).model
    coords = torch.rand(4, 12, 2, generator=torch.Generator().manual_seed(1))
    points = TSP.generate(SizeRange(60, 60), 2, seed=43, stream=7)
    greedy = predict(bundled, TSP, points)
    set_fast(bundled, True)
    fast = rebuild_paths(model, coords), improve_tours_of(bundled, points, greedy, 3)
    set_fast(bundled, False)
    try:
        reference = rebuild_paths(model, coords), improve_tours_of(bundled, points, greedy, 3)
    finally:
        set_fast(bundled, True)
    assert torch.equal(fast[0], reference[0])
    for a, b in zip(fast[1], reference[1], strict=True):
        np.testing.assert_array_equal(a, b)
