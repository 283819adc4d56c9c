"""Benchmarks: each prints a ratio against a floor measured in the same run."""
