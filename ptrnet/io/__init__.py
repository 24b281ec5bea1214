"""File formats: the paper's released text format, TSPLIB, atomic writes, and input errors."""
