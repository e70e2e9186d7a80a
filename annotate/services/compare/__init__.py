"""Compare projects (issue 16): pairing solutions, claiming pairs, storing preferences, the
preference export and the pair statistics. The step-label queue's leases, heartbeats, drafts and
idempotency apply unchanged: a pair is served through an Assignment whose `comparison` is set."""
