"""Business logic of the labeling domain, one module per capability."""
