"""Training: recording proxy, records, trajectories, credit, advantages, veRL adapter, rollout backends."""
