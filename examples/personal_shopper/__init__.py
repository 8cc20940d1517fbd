"""A personal shopper over a small SQLite shop database: look up, order, refund, notify."""
