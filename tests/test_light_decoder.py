"""The light context decoder (Kool et al. 2019, ptrnet.model.light): its slow reference of one
step (run by test_permutation_decoders.py, with what it shares with the heavy decoder), its
refusals and training from the command line."""

import math

import pytest
import torch

from ptrnet.cli.main import main
from ptrnet.inference import load_model
from ptrnet.model import ModelConfig
from ptrnet.model.light import LightPointer
from ptrnet.runs.config import RunConfig, TrainConfig

torch.set_num_threads(1)
LIGHT = dict(encoder="transformer", encoder_layers=1, decoder="light", heads=2, logit_clip=10.0)


def reference_logits(model, points, n, prefix):
    """One step written out for a single instance, a loop over heads and allowed columns: the
    context query, its glimpse over the allowed tokens, the clipped compatibilities."""
    nodes = model.encoder(points[None], torch.tensor([n]))[0][0]  # (n, d)
    chosen = [t for t in prefix if t > 0]
    first, last = (chosen[0], prefix[-1]) if chosen else (0, 0)
    rest = [j + 1 for j in range(n) if j + 1 not in chosen]
    allowed = [0, *rest] + ([first] if first and not rest and last != first else [])
    query = model.graph_proj(nodes.mean(dim=0))
    query = query + (model.first_proj(nodes[first - 1]) if first else model.first_start)
    query = query + (model.last_proj(nodes[last - 1]) if last else model.last_start)
    return reference_pointer(model, nodes, query, allowed)


def reference_pointer(model, nodes, query, allowed):
    """The light and the route decoder's common end of a step, written out: the query's glimpse
    over the ``allowed`` tokens, head by head, then the clipped compatibilities -> (n+1,)
    logits, -inf elsewhere."""
    n, d, heads = len(nodes), model.config.hidden, model.config.heads
    gk, gv, lk = model.keys(nodes).chunk(3, dim=-1)  # (n, d) each
    keys = [torch.cat([model.end_keys[i][None], k]) for i, k in enumerate((gk, gv, lk))]
    size = d // heads
    parts = []
    for h in range(heads):
        cut = slice(h * size, (h + 1) * size)
        scores = torch.stack([query[cut] @ keys[0][j, cut] / math.sqrt(size) for j in allowed])
        weights = torch.softmax(scores, dim=0)
        parts.append(sum(w * keys[1][j, cut] for w, j in zip(weights, allowed, strict=True)))
    glimpse = model.glimpse_out(torch.cat(parts))
    logits = torch.full((n + 1,), float("-inf"))
    for j in allowed:
        logits[j] = model.config.logit_clip * torch.tanh(glimpse @ keys[2][j] / math.sqrt(d))
    return logits


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"encoder": "lstm"}, "the light decoder needs the transformer encoder"),
        ({"glimpses": 1}, "glimpses apply to the lstm decoder only, not to the light one"),
        ({"kind": "seq2seq", "max_n": 5}, "apply to the pointer model only"),
    ],
)
def test_bad_light_choices_are_refused(kw, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(input_dim=2, hidden=16, **{**LIGHT, **kw})


def test_tasks_whose_output_is_no_permutation_are_refused(capsys, tmp_path):
    with pytest.raises(ValueError, match="--decoder light needs .* \\(sort, tsp\\), not delaunay"):
        RunConfig(ModelConfig(hidden=16, **LIGHT), TrainConfig(task="delaunay", sizes="5", steps=1))
    args = ["train", "convex_hull", "--dry-run", "--decoder", "light", "--out", str(tmp_path)]
    assert main(args) == 2
    assert capsys.readouterr().err.startswith("ptrnet: error: --decoder light needs")


def test_ptrnet_train_runs_it_with_kools_defaults(tmp_path):
    """--decoder light brings the transformer encoder and logit clipping at 10 unless given;
    --decoder-layers (the heavy decoder's) is refused as unused."""
    out = tmp_path / "run"
    args = ["train", "tsp", "--dry-run", "--decoder", "light", "--heads", "2", "-q"]
    assert main([*args, "--threads", "1", "--out", str(out)]) == 0
    model = load_model(out, "tsp")
    assert isinstance(model.model, LightPointer)
    assert (model.config.model.encoder, model.config.model.logit_clip) == ("transformer", 10.0)
    assert main([*args, "--decoder-layers", "2", "--out", str(tmp_path / "other")]) == 2


def test_a_step_gives_the_teacher_forced_scores_bit_for_bit():
    """``step``'s one query per row (the step tables ``encode`` builds, ``step_mask``) returns
    exactly the logits of ``scores`` with T = 1 (the path teacher forcing takes): along random
    walks of a padded batch, after rows are re-selected as beams are, with and without logit
    clipping, and from a state built as RRC builds it (the first token chosen, the last not)."""
    gen = torch.Generator().manual_seed(0)
    for clip in (10.0, 0.0):
        torch.manual_seed(1)
        config = ModelConfig(input_dim=2, hidden=16, **{**LIGHT, "logit_clip": clip})
        model = LightPointer(config).eval()
        lengths = torch.tensor([7, 4, 6])
        points = torch.rand(3, 7, 2, generator=gen)
        with torch.no_grad():
            memory = model.encode(points, lengths)
            prev, state = torch.zeros(3, dtype=torch.long), memory.state
            for t in range(9):
                if t == 4:  # beams: rows re-selected, one twice
                    rows = torch.tensor([2, 0, 0, 1])
                    memory, prev = memory.index(rows), prev[rows]
                    state = tuple(s[:, rows] for s in state)
                logits, state = model.step(memory, prev, state)
                chosen, first = state
                want = model.scores(memory, chosen[0, :, None], first[0, :, None], prev[:, None])
                assert torch.equal(logits, want[:, 0]), (clip, t)
                prev = torch.multinomial(torch.isfinite(logits).float(), 1, generator=gen)[:, 0]
            chosen = torch.zeros(1, 1, 8, dtype=torch.bool)
            chosen[0, 0, 7] = True  # RRC: the segment's last city chosen as the first token
            state, last = (chosen, torch.tensor([[7]])), torch.tensor([1])
            memory = model.encode(points[:1], torch.tensor([7]))
            logits, (chosen, first) = model.step(memory, last, state)
            want = model.scores(memory, chosen[0, :, None], first[0, :, None], last[:, None])
            assert torch.equal(logits, want[:, 0])
