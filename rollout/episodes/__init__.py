"""Episodes: one run of one agent on one task through the real MCP servers (`Episode`), the
runner that drives them with a policy, their records, and batches of them."""
