"""What rollouts produce: SFT and RL exports, reports (terminal and HTML) and scores."""
