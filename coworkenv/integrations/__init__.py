"""Adapters that let trainers and agents drive coworkenv episodes: TRL (`trl`), verifiers /
prime-rl (`verifiers_env`), OpenEnv (`openenv_server`), verl (`verl`), SkyRL (`skyrl`) and
any MCP agent (`mcp_agents`). The glue they share: tool calls written as text and read back
(`tool_text`), an episode played from model text one gym-style step at a time
(`text_episode`), one episode's tools as an MCP endpoint (`episode_server`) and the tasks a
worker process plays (`task_sets`). Each is built on `coworkenv.Episode`; none imports its
trainer library at import time unless it must subclass one of its classes."""
