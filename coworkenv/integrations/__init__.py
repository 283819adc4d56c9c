"""Adapters that let trainers drive coworkenv episodes: TRL (`trl`), verifiers / prime-rl
(`verifiers_env`) and OpenEnv (`openenv_server`). Each is built on `coworkenv.Episode`; none
imports its trainer library at import time unless it must subclass one of its classes."""
