"""Agents: the scripted policies (oracle, no-op, noisy), the OpenAI-compatible model agent and
its client, the simulated user, and the tool schemas and token counts a model sees."""
