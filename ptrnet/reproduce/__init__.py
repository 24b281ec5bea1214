"""Reproduce the paper's tables: ``ptrnet reproduce table1|table2|delaunay`` (docs/reproduce.md).

:mod:`~ptrnet.reproduce.plans` says what each table needs per scale, :mod:`~ptrnet.reproduce.run`
trains or reuses the models and evaluates them on the sets of :mod:`~ptrnet.reproduce.testsets`,
and :mod:`~ptrnet.reproduce.tables` writes the Markdown.
"""
