"""Chat models: the provider registry (registry.py) and one module per provider."""
