"""The shop's small SQLite database: customers, products, purchases.

Every connection is opened from the path the run carries in ``context_variables["db_path"]``,
so each conversation (and each test) can have its own file.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "shop.db"
    >>> create_database(path)
    >>> [row[1] for row in query(path, "SELECT * FROM products ORDER BY product_id")][:2]
    ['Trail running shoes', 'Rain jacket']
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CUSTOMERS = [
    (1, "Ana", "Silva", "ana@example.com", "+351 21 000 0001"),
    (2, "Bo", "Lind", "bo@example.com", None),
]
PRODUCTS = [
    (101, "Trail running shoes", 89.0),
    (102, "Rain jacket", 120.0),
    (103, "Water bottle", 15.0),
    (104, "Head torch", 35.0),
]
PURCHASES = [  # (purchase_id, customer_id, product_id, amount)
    (1, 1, 102, 120.0),
    (2, 1, 103, 15.0),
    (3, 2, 101, 89.0),
]


def connect(path: str | Path) -> sqlite3.Connection:
    return sqlite3.connect(str(path))


def create_database(path: str | Path) -> None:
    """Create the tables and fill them with the sample rows (again from scratch)."""
    with connect(path) as db:
        db.executescript(
            """
            DROP TABLE IF EXISTS customers; DROP TABLE IF EXISTS products;
            DROP TABLE IF EXISTS purchases; DROP TABLE IF EXISTS notifications;
            CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, first_name TEXT,
                                    last_name TEXT, email TEXT, phone TEXT);
            CREATE TABLE products (product_id INTEGER PRIMARY KEY, name TEXT, price REAL);
            CREATE TABLE purchases (purchase_id INTEGER PRIMARY KEY, customer_id INTEGER,
                                    product_id INTEGER, amount REAL,
                                    refunded INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE notifications (customer_id INTEGER, method TEXT, address TEXT);
            """
        )
        db.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?)", CUSTOMERS)
        db.executemany("INSERT INTO products VALUES (?, ?, ?)", PRODUCTS)
        db.executemany("INSERT INTO purchases (purchase_id, customer_id, product_id, amount) "
                       "VALUES (?, ?, ?, ?)", PURCHASES)  # fmt: skip
    # sqlite3's context manager commits but does not close
    connect(path).close()


def query(path: str | Path, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
    """Rows of one read."""
    db = connect(path)
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()


def execute(path: str | Path, sql: str, params: Sequence[Any] = ()) -> int:
    """One write, committed; returns the new row id."""
    db = connect(path)
    try:
        with db:
            return db.execute(sql, params).lastrowid or 0
    finally:
        db.close()
