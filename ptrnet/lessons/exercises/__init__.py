"""Exercises a student writes: five stubs (pointer attention, masking, hull labels, tour cost,
greedy decoding) and a script that trains a sorter with them (``ptrnet exercises DIR``), checked
against ptrnet's own implementations on random cases (``ptrnet exercises check DIR``).

* :mod:`~ptrnet.lessons.exercises.sources`: the filled-in files (the solutions).
* :mod:`~ptrnet.lessons.exercises.write`: writes the stubs or the solutions into a folder.
* :mod:`~ptrnet.lessons.exercises.check`: loads a student's files and names what is wrong, each
  in a child process with a time limit for ``ptrnet exercises check``.
"""
