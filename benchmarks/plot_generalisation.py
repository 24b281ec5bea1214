"""The generalisation curve from benchmarks/bench_kool.py's JSON lines: mean gap against the test
size n for chosen (model, decoding) series, as a Markdown table on stdout and a PNG.

    python benchmarks/plot_generalisation.py docs/beyond-runs/kool-*.jsonl \\
        --series "kool-tsp20 greedy" --series "ptrnet:bundled greedy" \\
        --out docs/images/generalisation.png

For each series and size, the row over the most instances is used; the table gives its count.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path


def best_rows(rows: Sequence[dict], series: Sequence[str]) -> dict[str, dict[int, dict]]:
    """{series: {n: row}}: per series ("MODEL DECODE") and uniform size n, the row with the
    largest count (TSPLIB rows, whose n is a range, are left out)."""
    out: dict[str, dict[int, dict]] = {name: {} for name in series}
    for row in rows:
        name = f"{row['model']} {row['decode']}"
        if name not in out or not isinstance(row["n"], int):
            continue
        kept = out[name].get(row["n"])
        if kept is None or row["count"] > kept["count"]:
            out[name][row["n"]] = row
    return out


def table(curves: dict[str, dict[int, dict]]) -> str:
    """A Markdown table: one line per series, one column per size, ``gap% (count)`` cells."""
    sizes = sorted({n for curve in curves.values() for n in curve})
    lines = [
        "| model, decoding | " + " | ".join(f"n = {n}" for n in sizes) + " |",
        "|---|" + "---:|" * len(sizes),
    ]
    for name, curve in curves.items():
        cells = [
            f"{100 * curve[n]['mean_gap']:.2f}% ({curve[n]['count']:,})" if n in curve else "—"
            for n in sizes
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(curves: dict[str, dict[int, dict]], path: str | Path) -> None:
    """Gap (%) against n on log-log axes, one line per series, saved to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    for name, curve in curves.items():
        sizes = sorted(curve)
        ax.plot(sizes, [100 * curve[n]["mean_gap"] for n in sizes], marker="o", label=name)
    ax.axvspan(5, 20, color="0.9", zorder=0, label="training sizes (ptrnet 5-20, Kool 20)")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_ylim(bottom=0)
    ticks = sorted({n for curve in curves.values() for n in curve})
    ax.set_xticks(ticks, [str(n) for n in ticks])
    ax.minorticks_off()
    ax.set_xlabel("test size n (uniform instances in the unit square)")
    ax.set_ylabel("mean gap to the reference tours (%)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("jsonl", nargs="+")
    parser.add_argument("--series", action="append", required=True, metavar="'MODEL DECODE'")
    parser.add_argument("--out", required=True, metavar="PNG")
    args = parser.parse_args()
    rows = [json.loads(line) for path in args.jsonl for line in Path(path).read_text().splitlines()]
    curves = best_rows(rows, args.series)
    print(table(curves))
    plot(curves, args.out)


if __name__ == "__main__":
    main()
