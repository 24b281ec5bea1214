"""Teaching material run from the command line: exercises a student fills in
(:mod:`ptrnet.lessons.exercises`, ``ptrnet exercises``) and the classic traps of pointer
networks, each measured by a short experiment (:mod:`ptrnet.lessons.traps`, ``ptrnet lesson``).
"""
