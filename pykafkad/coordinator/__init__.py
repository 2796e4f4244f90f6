"""Coordinators: the group coordinator (group/), and later the transaction coordinator."""
