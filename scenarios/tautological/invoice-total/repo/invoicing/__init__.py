"""Invoicing for subscription plans."""
