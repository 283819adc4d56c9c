"""Workday families: one simulated day of several turns over one evolving workspace, where
replies arrive, plans change and later requests lean on earlier results and facts."""
