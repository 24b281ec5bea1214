"""Searches after decoding: what a task's card declares (``Task.searches``,
:mod:`ptrnet.tasks.searches`), run on a model's decoded answers.

* :mod:`ptrnet.searches.plan` -- :class:`SearchPlan`, the one value every front end builds
  (which searches, rounds, seed), checked against a task in one place, with every refusal
  worded from the declarations (no torch: the command line builds its flags from it);
* :mod:`ptrnet.searches.run` -- :func:`run_searches`, the one entry point, and the runner of
  each rebuild search (``REBUILDS``);
* :mod:`ptrnet.searches.rebuild` -- Random Re-Construct on a loaded model's tours in any units;
* :mod:`ptrnet.searches.reconstruct` -- Random Re-Construct itself, on tensors.

The package itself imports nothing, so importing the plan does not import torch.
"""
