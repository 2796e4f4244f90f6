"""Authentication of clients: SASL mechanisms and the credentials they check."""
