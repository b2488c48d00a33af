"""Inspect tools over the services; importing the modules registers them in `TOOL_SPECS`."""

from forge_eval.benchmarks.services._tools import calendar, contacts, inventory, kb, mail, tickets

__all__ = ["calendar", "contacts", "inventory", "kb", "mail", "tickets"]
