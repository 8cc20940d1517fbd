"""Which optional extra a missing module belongs to, and the line that says how to install it.

One table, :data:`EXTRA_OF_MODULE`, maps the modules our extras bring (pyproject.toml's
``[project.optional-dependencies]``) to the extra's name, so a command that fails on an
import names the right extra, never another one's:

    >>> install_hint(ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib"))
    "No module named 'matplotlib': it comes with the draw extra (pip install 'swarmgraph[draw]')"
    >>> extra_for("langgraph.checkpoint.postgres"), extra_for("langgraph.graph")
    ('postgres', None)

A module that is no extra's (a typo in the user's own code, a broken install) gets no hint:
its own message says what is wrong.
"""

from __future__ import annotations

__all__ = [
    "EXTRA_OF_MODULE",
    "MissingExtra",
    "extra_for",
    "install_command",
    "install_hint",
    "require_extra",
]

#: Dotted module prefix -> the extra that installs it. The longest matching prefix wins, so
#: ``langgraph.checkpoint.postgres`` is the postgres extra's while ``langgraph`` is the core's.
EXTRA_OF_MODULE: dict[str, str] = {
    # draw: `swarmgraph graph --format png`, the notebooks' pictures
    "matplotlib": "draw",
    "grandalf": "draw",
    # serve: `langgraph dev` on langgraph.json
    "langgraph_cli": "serve",
    "langgraph_api": "serve",
    "langgraph_runtime_inmem": "serve",
    "langgraph_sdk": "serve",
    # postgres: Session, the checkpointer and long-term memory on postgresql:// URLs
    "psycopg": "postgres",
    "psycopg_pool": "postgres",
    "psycopg_binary": "postgres",
    "langchain_postgres": "postgres",
    "langgraph.checkpoint.postgres": "postgres",
    "langgraph.store.postgres": "postgres",
    # redis: Session on redis:// URLs
    "redis": "redis",
    # tracing: OpenTelemetry spans (the API, and the SDK `demo --trace` reads them back with)
    "opentelemetry": "tracing",
    # temporal: swarmgraph.temporal, `swarmgraph worker --temporal`
    "temporalio": "temporal",
    # ui: `swarmgraph ui` (the AG-UI protocol's models)
    "ag_ui": "ui",
    # dev: tests and notebooks
    "playwright": "dev",
    "pytest": "dev",
    "pexpect": "dev",
    "hypothesis": "dev",
    "nbclient": "dev",
    "nbformat": "dev",
    "ipykernel": "dev",
    "langchain_tests": "dev",
    # bench: the side-by-side peers
    "langgraph_swarm": "bench",
    "agents": "bench",
    "psutil": "bench",
    "pyinstrument": "bench",
}


def extra_for(module: str | None) -> str | None:
    """The extra that installs ``module`` (a dotted name), or None when it is no extra's.

    Example:
        >>> extra_for("matplotlib.pyplot"), extra_for("redis"), extra_for("numpy")
        ('draw', 'redis', None)
    """
    if not module:
        return None
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        extra = EXTRA_OF_MODULE.get(".".join(parts[:end]))
        if extra is not None:
            return extra
    return None


def _missing_module(error: ImportError) -> str | None:
    """The module an ImportError is about: ``error.name``, else the one its message quotes."""
    if error.name:
        return error.name
    text = str(error)
    for marker in ("No module named '", 'No module named "'):
        if marker in text:
            return text.split(marker, 1)[1].split(marker[-1], 1)[0]
    return None


def install_command(extra: str) -> str:
    """The command that installs ``extra``, wherever swarmgraph was installed from (a
    checkout's editable install takes the same extras: ``pip install -e '.[draw]'``).

    Example:
        >>> install_command("postgres")
        "pip install 'swarmgraph[postgres]'"
    """
    return f"pip install 'swarmgraph[{extra}]'"


def install_hint(error: ImportError) -> str:
    """``error`` as one line that names the extra to install, when the module is an extra's.

    Example:
        >>> install_hint(ModuleNotFoundError("No module named 'redis'", name="redis"))
        "No module named 'redis': it comes with the redis extra (pip install 'swarmgraph[redis]')"
        >>> install_hint(ModuleNotFoundError("No module named 'my_app'", name="my_app"))
        "No module named 'my_app'"
    """
    text = " ".join(str(error).split()) or type(error).__name__
    extra = extra_for(_missing_module(error))
    if extra is None or install_command(extra) in text:  # e.g. Session's own message
        return text
    return f"{text}: it comes with the {extra} extra ({install_command(extra)})"


class MissingExtra(ImportError):
    """What a command needs is not installed; the message names every missing module and the
    extra that brings them."""


def require_extra(extra: str, *modules: str, purpose: str) -> None:
    """Raise :class:`MissingExtra` naming each of ``modules`` (all ``extra``'s) not installed,
    all at once rather than one per try.

    Example:
        >>> require_extra("draw", "json", purpose="drawing")   # installed: nothing happens
        >>> try:
        ...     require_extra("draw", "no_such_module_x", purpose="a PNG")
        ... except MissingExtra as error:
        ...     print(error)
        a PNG needs the draw extra (missing: no_such_module_x): pip install 'swarmgraph[draw]'
    """
    import importlib.util

    def absent(module: str) -> bool:
        try:
            return importlib.util.find_spec(module) is None
        except ImportError:  # a parent package, or an import hook, says it is not there
            return True

    missing = [m for m in modules if absent(m)]
    if missing:
        raise MissingExtra(
            f"{purpose} needs the {extra} extra (missing: {', '.join(missing)}): "
            f"{install_command(extra)}"
        )
