"""Pictures of instances, solutions, pointer distributions and training curves.

matplotlib is imported inside the submodules only, so ``import ptrnet`` stays light. Figures are
built with :class:`matplotlib.figure.Figure` directly (no pyplot, no global state) and rendered
by the Agg canvas, so no display is needed.

* :mod:`ptrnet.viz.draw` -- an instance with the exact solution and a model's output, per task.
* :mod:`ptrnet.viz.heatmap` -- the pointer distribution at every decoding step.
* :mod:`ptrnet.viz.curves` -- training curves from a run directory's ``log.csv``.
* :mod:`ptrnet.viz.figures` -- the composed figures that ``ptrnet plot`` saves.
* :mod:`ptrnet.viz.induction` -- the induction lesson's loss curves and attention maps.
"""
