"""Benchmarks (`make bench`). Figures are whole-process medians, reported as ratios against a
baseline measured in the same run, because shared machines are noisy."""
