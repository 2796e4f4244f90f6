"""The share coordinator (KIP-932): share groups' delivery state, kept in ``__share_group_state``."""
