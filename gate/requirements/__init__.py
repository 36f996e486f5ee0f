"""The gate's requirements, one decorated function each (gate.registry), grouped by what they ask.

Importing this package registers them all; add a module here when a new
group does not fit an existing one.
"""

from tether.gate.requirements import checks, claims, safety, steps

__all__ = ["checks", "claims", "safety", "steps"]
