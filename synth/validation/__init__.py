"""The validation contract a synthesized task must pass before it is kept: the stages, the
wrong variants that must fail (mutants) and the right ones that must pass (acceptance), the
reward-hacking search, and the workers that run it in processes or on Ray."""
