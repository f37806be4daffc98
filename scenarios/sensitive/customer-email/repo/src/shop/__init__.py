"""Checkout service."""
