"""Is torch's fused CPU LSTM (oneDNN) the floor for ptrnet's small training steps?

Compares, forward + backward of one LSTM layer at B = 128 (one thread, CPU time: medians of
rounds that interleave the two), ``nn.LSTM`` against a hand-written sequence LSTM: the input
projections of all T steps in one matmul, one sigmoid per step for all four gates
(tanh(z) = 2 sigmoid(2z) - 1, the g rows doubled), the factors of the backward that do not
depend on the recurrence computed for all steps at once (6 kernels a step left), and the weight
gradients as one matmul each. It first checks, in float64, that both compute the same function
(outputs and gradients to 1e-6). docs/speed.md ("Sort, n = 10, hidden 128") has the result: the
hand-written one was slower, so ptrnet keeps ``nn.LSTM``.

Usage: ``python benchmarks/bench_lstm_kernels.py [--steps 10,11] [--hidden 128] [--rounds 15]``
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn


class SequenceLSTM(torch.autograd.Function):
    """One LSTM layer, gate order i, f, g, o: x (B, T, dim), h0 and c0 (B, d), the weights of
    ``nn.LSTM``'s ``*_l0`` -> outputs (B, T, d), final h and c (B, d)."""

    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        batch, steps, dim = x.shape
        d = w_hh.shape[1]
        xt = x.transpose(0, 1).reshape(steps * batch, dim)  # (T*B, dim), time-major
        scale = torch.ones(4 * d, 1, dtype=x.dtype)
        scale[2 * d : 3 * d] = 2  # tanh(z) = 2 sigmoid(2z) - 1 on the g rows
        w_hh_t = (w_hh * scale).t()  # (d, 4d)
        acts = torch.addmm((b_ih + b_hh) * scale[:, 0], xt, (w_ih * scale).t())
        acts = acts.view(steps, batch, 4 * d)  # (T, B, 4d): pre-activations, then activations
        cs, hs = x.new_empty(steps + 1, batch, d), x.new_empty(steps + 1, batch, d)
        ss = x.new_empty(steps, batch, d)  # (T, B, d): sigmoid(2 c_t)
        cs[0], hs[0] = c0, h0
        for t in range(steps):
            gates = acts[t].addmm_(hs[t], w_hh_t).sigmoid_()  # (B, 4d)
            g = gates[:, 2 * d : 3 * d].mul_(2).sub_(1)
            torch.mul(gates[:, d : 2 * d], cs[t], out=cs[t + 1]).addcmul_(gates[:, :d], g)
            torch.sigmoid(cs[t + 1] * 2, out=ss[t])
            o = gates[:, 3 * d :]
            torch.mul(o, ss[t], out=hs[t + 1]).mul_(2).sub_(o)  # o tanh(c_t)
        tcs = ss.mul_(2).sub_(1)  # (T, B, d): tanh(c_t)
        ctx.save_for_backward(xt, w_ih, w_hh, acts, cs, hs, tcs)
        return hs[1:].transpose(0, 1), hs[steps].clone(), cs[steps].clone()

    @staticmethod
    def backward(ctx, d_out, d_hT, d_cT):
        xt, w_ih, w_hh, acts, cs, hs, tcs = ctx.saved_tensors
        steps, batch, d = tcs.shape
        d_h = torch.zeros(batch, d, dtype=hs.dtype) if d_hT is None else d_hT.clone()
        d_c = torch.zeros(batch, d, dtype=hs.dtype) if d_cT is None else d_cT.clone()
        d_outs = d_out.transpose(0, 1)  # (T, B, d)
        i, f, g, o = acts.split(d, dim=2)  # each (T, B, d)
        deriv = acts * (1 - acts)  # sigmoid'; tanh' = 1 - g^2 on the g rows
        deriv[:, :, 2 * d : 3 * d] = 1 - g * g
        factor = torch.cat([g, cs[:-1], i, tcs], dim=2).mul_(deriv).view(steps, batch, 4, d)
        dc_dh = o * (1 - tcs * tcs)  # (T, B, d)
        d_pre = torch.empty_like(acts).view(steps, batch, 4, d)
        for t in reversed(range(steps)):
            d_h = d_h.add_(d_outs[t])
            d_c.addcmul_(d_h, dc_dh[t])
            torch.mul(factor[t, :, :3], d_c[:, None], out=d_pre[t, :, :3])
            torch.mul(factor[t, :, 3], d_h, out=d_pre[t, :, 3])
            d_c.mul_(f[t])
            d_h = d_pre[t].view(batch, 4 * d) @ w_hh  # (B, d)
        d_pre = d_pre.view(steps * batch, 4 * d)  # (T*B, 4d)
        d_x = (d_pre @ w_ih).view(steps, batch, -1).transpose(0, 1)
        d_w_hh = d_pre.t() @ hs[:-1].reshape(steps * batch, d)
        d_b = d_pre.sum(dim=0)
        return d_x, d_h, d_c, d_pre.t() @ xt, d_w_hh, d_b, d_b


def check_float64(steps: int, d: int) -> None:
    """Raise AssertionError unless both LSTMs agree to 1e-6 in float64."""
    lstm = nn.LSTM(2, d, batch_first=True).double()
    x, h0, c0 = (torch.randn(s, dtype=torch.float64) for s in ((8, steps, 2), (1, 8, d), (1, 8, d)))
    inputs = [t.requires_grad_() for t in (x, h0, c0)] + list(lstm.parameters())
    out, (h, c) = lstm(x, (h0, c0))
    weights = torch.randn_like(out)
    want = torch.autograd.grad((out * weights).sum() + h.sum() + (c * c).sum(), inputs)
    out2, h2, c2 = SequenceLSTM.apply(x, h0[0], c0[0], *lstm.parameters())
    got = torch.autograd.grad((out2 * weights).sum() + h2.sum() + (c2 * c2).sum(), inputs)
    torch.testing.assert_close(out2, out, atol=1e-6, rtol=1e-6)
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a.reshape(b.shape), b, atol=1e-6, rtol=1e-6)


def compare(steps: int, d: int, rounds: int) -> str:
    lstm = nn.LSTM(2, d, batch_first=True)
    x, h0, c0 = torch.randn(128, steps, 2), torch.randn(1, 128, d), torch.randn(1, 128, d)

    def fused():
        out, (h, _) = lstm(x, (h0, c0))
        (out.sum() + h.sum()).backward()

    def hand_written():
        out, h, _ = SequenceLSTM.apply(x, h0[0], c0[0], *lstm.parameters())
        (out.sum() + h.sum()).backward()

    fns = {"nn.LSTM": fused, "hand-written": hand_written}
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.thread_time()
            fn()
            times[name].append(time.thread_time() - start)
    ms = {name: statistics.median(t) * 1e3 for name, t in times.items()}
    return f"| {steps} | {d} | {ms['nn.LSTM']:.1f} | {ms['hand-written']:.1f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="10,11")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    steps = [int(s) for s in args.steps.split(",")]
    for t in steps:
        check_float64(t, 16)
    print("same function in float64 (1e-6)\n")
    print("| T | d | nn.LSTM ms | hand-written ms |\n|---|---|---|---|")
    for t in steps:
        print(compare(t, args.hidden, args.rounds), flush=True)


if __name__ == "__main__":
    main()
