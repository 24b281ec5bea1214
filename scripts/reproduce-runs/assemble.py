"""Put the reproduced tables (DIR/<table>.md) into docs/results.md, one level down, each followed
by its commentary from COMMENTS (kept here so a rerun rewrites the section in one go)."""

import re
import sys

DIR, RESULTS = "/work/runs/repro", "/work/main/docs/results.md"
COMMENTS = {
    "table1": """Train time: 2.3 h on one core for the six models. Decoded with beam search
(width 5), the paper's decoding; greedy, used in this table's first version, was 0.2-4.2 points
lower (5-50 Ptr-Net: 89.3%, 79.0%, 40.1% at n = 5, 10, 50; Ptr-Net 50→50: 38.1%; LSTM 5→5 and
10→10: 81.8% and 26.1%). The Ptr-Nets are 2.5-33 points behind the paper at n <= 50 and fall
off faster beyond the trained sizes (15.6% at n = 100 against 50.3%): 20,000 steps of batch 128
are 2.6M pairs, a fraction of the paper's training. The same recipe run for 112,000 steps, the
bundled hull model, passes the paper at n = 5 (94.1%) and reaches it at n = 10 (87.2% on 10,000
instances); see below. The 5-50 Ptr-Net's polygons are simple often enough at n = 5 and 10 (no
FAIL); elsewhere most FAIL flags are narrow (1.3-3.6% not simple for the 5-50 Ptr-Net, 7.8% for
the 50→50 one), with 99.2-99.9% of the area covered. The fixed-vocabulary baselines track the
paper where they are small (LSTM 5→5 82.4% against 87.7%; LSTM 10→10 30.3% against 29.9%); the
LSTM at n = 50 did not learn within 10,000 steps (training loss 3.75 → 3.38 nats per step, log
51 = 3.93 being uniform guessing; paper 1.9%). The attention baseline reached 16.8% (paper
38.9%) after learning nothing for its first 6,000 steps (loss 3.17) and then quickly (0.53 at
10,000 steps, validation accuracy 0 → 15.5% and still rising when its budget ended). Its first
run, before the model fed its attention back into the recurrence as the paper's Sec. 2.2 says,
had not learned at all in 10,000 steps (0%, loss 3.26).""",
    "table2": """Train time: 8, 12, 14, 26 and 25 min for the n = 5, 10, 5-20, A1- and
A3-labelled n = 50 models, plus 18 min labelling 200,000 exact 5-20 tours, 4 min for 200,000 A1
tours and 34 min for 200,000 A3 (Christofides) tours at n = 50. At n = 5 every model is within
0.2% of the optimum (2.124-2.126 against 2.123 on the released file; the paper's 2.12). At n =
10 the models are 1.1-1.5% above optimal (paper: 0.3%), at n = 20 the 5-20 model 8.6% (paper:
1.3%): 20,000 steps shared across 5-20 leave the most to learn at the largest trained size.
Beyond it the model falls off faster than the paper's (n = 50: 9.71 against 7.66). The two n =
50 models reached 7.34 (A1 labels; paper 6.42) and 7.37 (A3 labels; paper 6.09), where A1 and
A3 themselves average 5.96 and 5.92 on the same test set. Both were best at step 2,000 of 6,000
(validation 7.71 and 7.68) and then got worse (7.9-8.2) while their teacher-forced validation
loss fell (A1 1.77 -> 1.36 nats per step; A3 2.07 -> 1.78, 1.91 at the end): early on the model
decodes like a nearest-neighbour rule; imitating tours made by 2-opt is a longer road that
768,000 training pairs do not travel to its end. Our A1 (greedy edge + 3 2-opt passes) is much
stronger than the paper's (2.909 against 3.07 at n = 10); our A3 is a little weaker than theirs
(0.6-2.1% above optimal at n = 10-20, where theirs matched it). Picking the shortest tour among
the beams (`ptrnet eval --pick shortest`, beyond the paper) closes most of the gap at n =
10-20: docs/training.md.""",
    "delaunay": """Train time: 1.3 h on one core. Far behind the paper: after 20,000 steps the
n = 5 model's training loss was still falling (0.35 nats per token), so the budget, not a
plateau, sets these numbers. Beam search (the paper's decoding) adds a little over greedy (n =
5: 25.1% / 67.0% against 22.6% / 67.5%; n = 10: 2.3% / 64.7% against 0.6% / 60.6%). The bundled
Delaunay model (n 5-10, hidden 128, learning rate 2e-3) did better at n = 5 on this table's
test set (48.5% / 78.1% with beam search) than this table's n = 5 model (learning rate 1e-3,
20,000 steps), after 50,000 steps; it was already ahead after its first 20,000 (32.5% / 74.5%
greedy on the demo's 200 instances), so a larger learning rate is the first thing to try with
more compute. Two warm restarts (1e-3 for 80,000 steps, 5e-4 for 35,000) took it to 60.7% /
83.8%. At n = 50 the cpu budget (2,000 steps, 35 minutes) only starts the model off (8.6% of
the triangles).""",
}


def section() -> str:
    parts = []
    for name in ("table1", "table2", "delaunay"):
        with open(f"{DIR}/{name}.md", encoding="utf-8") as stream:
            text = stream.read().strip()
        text = re.sub(r"^## ", "### ", text, flags=re.M)
        parts.append(f"{text}\n\n{COMMENTS[name]}")
    return "\n\n".join(parts)


def main() -> None:
    with open(RESULTS, encoding="utf-8") as stream:
        doc = stream.read()
    start = doc.index("## The paper's tables at the `cpu` scale")
    end = doc.index("## The bundled default models")
    intro = doc[start:end].split("\n\n")[:2]  # heading and the paragraph under it
    doc = doc[:start] + "\n\n".join(intro) + "\n\n" + section() + "\n\n" + doc[end:]
    with open(RESULTS, "w", encoding="utf-8") as stream:
        stream.write(doc)


if __name__ == "__main__":
    sys.exit(main())
