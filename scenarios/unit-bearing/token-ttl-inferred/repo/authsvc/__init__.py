"""Service-to-service token issuance."""
