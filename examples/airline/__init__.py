"""Airline customer service: triage, flight modification (cancel or change), lost baggage."""
