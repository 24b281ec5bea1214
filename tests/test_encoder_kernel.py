"""The set encoder's Transformer stack in inference (``ptrnet.model.transformer.run_layers``):
where every layer would take PyTorch's fast path, the fused kernel is called directly, and the
states are the module's own bit for bit; wherever a layer would not (training, gradients, an
odd number of heads, a hook), the modules run themselves."""

import pytest
import torch
from torch import nn

from ptrnet.model import transformer
from ptrnet.model.config import ModelConfig
from ptrnet.model.transformer import SetEncoder, fused_inference, run_layers

torch.set_num_threads(1)


def stack(heads=2, layers=2, seed=0):
    torch.manual_seed(seed)
    config = ModelConfig(
        input_dim=2, hidden=16, heads=heads, encoder="transformer", encoder_layers=layers
    )
    return SetEncoder(config).eval().layers


@pytest.mark.parametrize("n", [1, 5, 23])
def test_the_direct_kernel_gives_the_modules_states_bit_for_bit(n):
    layers, x = stack(), torch.randn(3, n, 16)
    for mode in (torch.inference_mode, torch.no_grad):
        with mode():
            assert fused_inference(layers, x)
            assert torch.equal(run_layers(layers, x), layers(x))


def test_anything_the_fast_path_refuses_runs_the_modules(monkeypatch):
    calls = []
    kernel = torch._transformer_encoder_layer_fwd
    monkeypatch.setattr(
        torch, "_transformer_encoder_layer_fwd", lambda *a: calls.append(1) or kernel(*a)
    )
    x = torch.randn(2, 6, 16)
    layers = stack()
    want = layers(x).detach()  # gradients recorded: the modules
    assert torch.equal(run_layers(layers, x), want) and not calls
    with torch.no_grad():
        odd = stack(heads=1)
        assert not fused_inference(odd, x)
        assert torch.equal(run_layers(odd, x), odd(x))
        layers.train()
        assert not fused_inference(layers, x)
        layers.eval()
        handle = layers.layers[1].linear2.register_forward_hook(lambda *a: None)
        assert not fused_inference(layers, x)
        handle.remove()
        assert fused_inference(layers, x)
        run_layers(layers, x)
    assert len(calls) == 2  # once per layer, only where every check passed


def test_the_settings_are_read_once_per_stack():
    layers = stack(seed=2)
    with torch.no_grad():
        fused_inference(layers, torch.randn(1, 4, 16))
    assert transformer._FUSABLE[layers][0] is layers
    assert isinstance(transformer._FUSABLE[layers][1], nn.ModuleList)
