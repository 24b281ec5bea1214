"""Average the weights of several checkpoints of one run into a new checkpoint.

Uniform averaging of late snapshots (Izmailov et al. 2018, "stochastic weight averaging",
done once after the run rather than during it). The output takes its configuration from the
first checkpoint and its step from the last, records the sources in ``info["average_of"]``,
and is written by ptrnet's own checkpoint writer, so ``ptrnet eval`` and
``benchmarks/paired_gap.py`` load it like any other. All checkpoints must share one model
configuration.

    python docs/bundled-runs/tsp/probe-average/average.py avg.safetensors \\
        n20a/kept/step-10000.safetensors n20a/kept/step-10500.safetensors ...
"""

import argparse

import torch

from ptrnet.inference import load_model
from ptrnet.runs.checkpoint import load_checkpoint, save_checkpoint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="checkpoint to write")
    parser.add_argument("checkpoints", nargs="+", help="checkpoints of one run, oldest first")
    args = parser.parse_args()
    checkpoints = [load_checkpoint(path) for path in args.checkpoints]
    first = checkpoints[0]
    if any(c.config.model != first.config.model for c in checkpoints):
        parser.error("the checkpoints do not share one model configuration")
    mean = {
        name: (sum(c.model_state[name].double() for c in checkpoints) / len(checkpoints)).to(
            tensor.dtype
        )
        for name, tensor in first.model_state.items()
    }
    model = load_model(args.checkpoints[-1]).model
    with torch.no_grad():
        model.load_state_dict(mean)
    info = {"average_of": args.checkpoints}
    save_checkpoint(args.out, first.config, checkpoints[-1].step, model, info=info)
    print(f"{args.out}: the mean of {len(checkpoints)} checkpoints")


if __name__ == "__main__":
    main()
