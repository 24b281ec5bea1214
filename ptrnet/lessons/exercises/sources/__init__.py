"""The exercise files, filled in: each is the solution a student's stub is made from.

Every file is plain Python that imports only torch and numpy (and, for ``train_sorter.py``,
the student's own files), so it runs from the folder ``ptrnet exercises DIR`` writes. Between
the lines ``# solution: begin`` and ``# solution: end`` of each function is its answer; the stub
has ``raise NotImplementedError`` there instead (:func:`ptrnet.lessons.exercises.write.stub`).
"""
