"""Password sign-in and session management."""

__version__ = "3.4.1"
