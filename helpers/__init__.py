"""Shared helpers for the self-attention course."""
