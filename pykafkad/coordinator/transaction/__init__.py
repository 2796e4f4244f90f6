"""Transactions (exactly-once): the transaction coordinator's parts.

``transaction_log`` holds the ``__transaction_state`` record formats; ``transaction_metadata``
one transactional id's state and Kafka's transitions between its states.
"""
