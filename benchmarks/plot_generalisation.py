"""The generalisation curve from benchmarks/bench_kool.py's JSON lines: mean gap against the test
size n for chosen (model, decoding) series, as a Markdown table on stdout and a PNG.

    python benchmarks/plot_generalisation.py docs/beyond-runs/kool-*.jsonl \\
        --series "kool-tsp20 greedy" --series "ptrnet:bundled greedy" \\
        --out docs/images/generalisation.png

For each series and size, the row over the most instances is used; the table gives its count.
``--label`` names the series in the table and the legend (in ``--series`` order; by default
the series itself); ``--span LO-HI:TEXT`` shades a band of sizes (by default the training
sizes of the first curve's two models, ``--span none`` for no band).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from ptrnet.io.atomic import check_output_path


def best_rows(rows: Sequence[dict], series: Sequence[str]) -> dict[str, dict[int, dict]]:
    """{series: {n: row}}: per series ("MODEL DECODE") and uniform size n, the row with the
    largest count (TSPLIB rows, whose n is a range, are left out)."""
    out: dict[str, dict[int, dict]] = {name: {} for name in series}
    for row in rows:
        name = f"{row.get('model')} {row.get('decode')}"
        if name not in out or not isinstance(row.get("n"), int):
            continue
        kept = out[name].get(row["n"])
        if kept is None or row["count"] > kept["count"]:
            out[name][row["n"]] = row
    return out


def read_rows(paths: Sequence[str]) -> list[dict]:
    """Every JSON line of ``paths`` (blank lines skipped); ValueError naming FILE:LINE."""
    rows = []
    for path in paths:
        for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}:{number}: not a JSON line ({err.msg})") from None
    return rows


DEFAULT_SPAN = "5-20:training sizes (ptrnet 5-20, Kool 20)"


def parse_span(text: str) -> tuple[int, int, str] | None:
    """``"LO-HI:TEXT"`` -> (LO, HI, TEXT), ``"none"`` -> None; ValueError otherwise."""
    if text == "none":
        return None
    sizes, sep, label = text.partition(":")
    lo, dash, hi = sizes.partition("-")
    if not (sep and dash and lo.isdigit() and hi.isdigit() and int(lo) <= int(hi)):
        raise ValueError(f"--span {text!r}: expected LO-HI:TEXT (e.g. 5-20:trained) or none")
    return int(lo), int(hi), label


def relabel(
    curves: dict[str, dict[int, dict]], labels: Sequence[str]
) -> dict[str, dict[int, dict]]:
    """The same curves under ``labels`` (one per series, in order; none keeps the names)."""
    if not labels:
        return curves
    if len(labels) != len(curves):
        raise ValueError(f"{len(labels)} --label for {len(curves)} --series: give one per series")
    return dict(zip(labels, curves.values(), strict=True))


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


def plot(
    curves: dict[str, dict[int, dict]], path: str | Path, span: tuple[int, int, str] | None
) -> None:
    """Gap (%) against n on log-log axes, one line per series, saved to ``path``; ``span``
    (LO, HI, TEXT) shades the sizes LO-HI."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9.0, 4.0), dpi=120)
    for name, curve in curves.items():
        sizes = sorted(curve)
        ax.plot(sizes, [100 * curve[n]["mean_gap"] for n in sizes], marker="o", label=name)
    if span is not None:
        ax.axvspan(span[0], span[1], color="0.9", zorder=0, label=span[2])
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_ylim(bottom=0)
    ticks = sorted({n for curve in curves.values() for n in curve})
    ax.set_xticks(ticks, [str(n) for n in ticks])
    ax.minorticks_off()
    ax.set_xlabel("test size n (uniform instances in the unit square)")
    ax.set_ylabel("mean gap to the reference tours (%)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the axes
    fig.tight_layout()
    fig.savefig(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("jsonl", nargs="+")
    parser.add_argument("--series", action="append", required=True, metavar="'MODEL DECODE'")
    parser.add_argument("--label", action="append", default=[], metavar="TEXT")
    parser.add_argument("--span", default=DEFAULT_SPAN, metavar="LO-HI:TEXT|none")
    parser.add_argument("--out", required=True, metavar="PNG")
    args = parser.parse_args()
    try:
        check_output_path(args.out)  # before the work, not after it
        span = parse_span(args.span)
        found = best_rows(read_rows(args.jsonl), args.series)
        empty = [name for name, sizes in found.items() if not sizes]
        if empty:
            raise ValueError(f"no row of a uniform size for --series {', '.join(empty)}")
        curves = relabel(found, args.label)
    except (OSError, ValueError) as err:
        parser.error(str(err))
    print(table(curves))
    plot(curves, args.out, span)


if __name__ == "__main__":
    main()
