"""``check``: how a notebook proves what its text says.

Every sentence of a notebook that states a result ("the caller's dict is unchanged", "Sales
answered", "messages holds more than messages+context") is followed, in the cell that shows
it, by a ``check`` of that claim. ``check`` prints a ✓ line when the claim holds and stops
the notebook with an ``AssertionError`` quoting the claim when it does not, so re-executing
the notebooks (``make test`` does) fails the moment one contradicts itself.

The notebooks import it from here: Jupyter starts a notebook's kernel in the notebook's
folder, which Python searches first.
"""

from __future__ import annotations

_UNSET = object()


def check(claim: str, actual: object, expected: object = _UNSET) -> None:
    """Print ``✓ claim`` if it holds, else raise ``AssertionError`` with what was found.

    ``check(claim, condition)`` checks that ``condition`` is true;
    ``check(claim, actual, expected)`` checks ``actual == expected`` and shows the value.

    Example:
        >>> check("two and two make four", 2 + 2, 4)
        ✓ two and two make four: 4
        >>> check("one is less than two", 1 < 2)
        ✓ one is less than two
        >>> check("two and two make five", 2 + 2, 5)
        Traceback (most recent call last):
        ...
        AssertionError: the notebook says: two and two make five
          expected: 5
          found:    4
    """
    if expected is _UNSET:
        if actual is not True:
            raise AssertionError(f"the notebook says: {claim}\n  but that is not so ({actual!r})")
        print(f"✓ {claim}")
        return
    if actual != expected:
        raise AssertionError(
            f"the notebook says: {claim}\n  expected: {expected!r}\n  found:    {actual!r}"
        )
    print(f"✓ {claim}: {actual!r}")
