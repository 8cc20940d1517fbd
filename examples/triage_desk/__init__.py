"""A triage desk for a bicycle shop: Triage sends people to Sales or Refunds."""
