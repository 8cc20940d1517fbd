"""Long-term memory: facts about a user that outlive every conversation, on LangGraph's Store.

The third kind of memory, beside messages ("what was said", one conversation) and
``context_variables`` (the key fields of one run). A memory is a :class:`Fact`: a ``key``
and a ``value`` with a ``scope`` and where it came from (conversation, turn, which agent
wrote it, when, the text it was taken from).

=========  ==================================================  ===========================
scope      who reads it                                        who writes it
=========  ==================================================  ===========================
"user"     every agent, in every conversation of that user     anyone with the user id
"agent"    that one agent, for that one user                   anyone with the user id
"shared"   every agent, for every user                         only ``trusted=True`` code
=========  ==================================================  ===========================

Users are kept apart by the store's namespaces, not by a filter: a user's facts live under
``("swarmgraph", "ltm", "user", <user>)``, an agent's notes under
``("swarmgraph", "ltm", "agent", <user>, <agent>)``, shared facts under
``("swarmgraph", "ltm", "shared")``, and superseded values under the same tails in
``"ltm-history"``. User ids and agent names are encoded into a label alphabet of
letters, digits, ``-`` and ``~`` (``.``, ``*``, ``%`` or ``_`` in an id cannot become a
separator or a wildcard), so no id can name another user's namespace.

Writing a key again supersedes its value: recall only ever sees the current one, and
:meth:`LongTermMemory.history` keeps them all (oldest first, the current one last).
:meth:`LongTermMemory.forget` hides a key from recall at once; its history keeps the old
values plus a *tombstone* (``forgotten=True``, empty value) saying when it was forgotten,
unless ``purge=True`` erases every stored value of the key.

Crash safety: a memory and its history entry are written in one transaction. A write that
carries a ``turn_id`` is keyed by (conversation, turn, key, value), so applying it again
after a crash (``kill -9`` between the turn and its memories, say) finds it done and writes
nothing: no duplicate history entry, and a later value is never overwritten by the replay.
A turn's write that changed nothing (the value was current already, nothing to forget)
leaves a marker entry for the same reason (:meth:`LongTermMemory.history` skips it).

Search: the store's own full-text index over each visible fact's key, value and source
text (:mod:`.lexical_sql`, :mod:`.lexical_index`), offline and deterministic; when
``embeddings`` are given (``memory://`` and ``sqlite:///``; Postgres with pgvector, see
:mod:`.long_term_store`), fused with the store's own vector index by default, or either
alone (:mod:`.fact_ranking`).

Example:
    >>> memory = LongTermMemory("memory://doctest-ltm", user_id="ming")
    >>> _ = memory.remember("dog_name", "Rex", text="My dog is called Rex.")
    >>> _ = memory.remember("city", "Lyon", text="I live in Lyon.")
    >>> _ = memory.remember("city", "Paris", text="I moved to Paris.")
    >>> [(f.key, f.value) for f in memory.recall("Which city do I live in?")]
    [('city', 'Paris')]
    >>> [f.value for f in memory.history("city")]
    ['Lyon', 'Paris']
    >>> LongTermMemory("memory://doctest-ltm", user_id="ana").recall("dog")   # another user
    []
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, cast

from langgraph.store.base import GetOp, Item, ListNamespacesOp, MatchCondition, PutOp

from .fact import (
    MAX_NAME_BYTES,
    MAX_TEXT_BYTES,
    SCOPES,
    Fact,
    Scope,
    check_name,
    check_text,
    format_facts,
    namespace_label,
    optional_text,
)
from .fact_history import with_spans
from .fact_namespaces import (
    CURRENT,
    ROOT,
    SCOPE_ORDER,
    namespaces,
    visible,
    writable,
    write_key,
)
from .fact_ranking import Ranking, check_ranking
from .fact_recall import indexed_text, ranked_recall
from .ids import check_conversation_id
from .lexical_index import list_namespace

# Fact and its checks live in .fact; their names stay importable from here, as before.
__all__ = [
    "MAX_NAME_BYTES",
    "MAX_TEXT_BYTES",
    "SCOPES",
    "Fact",
    "LongTermMemory",
    "Scope",
    "check_name",
    "format_facts",
    "namespace_label",
]

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from .long_term_store import LongTermStore


class LongTermMemory:
    """One user's long-term memory in the store ``url`` names (see the module docstring).

    ``url``: ``memory://[name]``, ``sqlite:///path`` or ``postgresql://...``; ``None`` is the
    default store Session uses. ``user_id``: whose memory this is; every read and write stays
    in that user's namespaces (plus the shared one). ``trusted``: may write ``"shared"``
    facts (application code; never give a model-facing tool a trusted instance).
    ``embeddings``: LangChain embeddings for vector recall (``memory://``, ``sqlite:///``,
    Postgres with pgvector), ``dims`` their size. All methods are synchronous; async code
    can call them in a thread.

    Example:
        >>> memory = LongTermMemory("memory://doctest-ltm-class", user_id="ming")
        >>> fact = memory.remember("pet", "a cat called Miso", conversation_id="c1",
        ...                        turn_id="t1", source_agent="Triage", text="I have a cat, Miso")
        >>> fact.value, fact.scope, fact.conversation_id, fact.source_agent
        ('a cat called Miso', 'user', 'c1', 'Triage')
        >>> memory.remember("pet", "a cat called Miso", conversation_id="c1", turn_id="t1"
        ...                 ) == fact   # applied again: already done, nothing written
        True
        >>> memory.forget("pet"), memory.recall("cat")
        (True, [])
        >>> [(f.value, f.forgotten) for f in memory.history("pet")]
        [('a cat called Miso', False), ('', True)]
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        user_id: str,
        trusted: bool = False,
        embeddings: Embeddings | None = None,
        dims: int | None = None,
    ) -> None:
        from .long_term_store import open_long_term_store

        self._open(user_id, trusted, open_long_term_store(url, embeddings=embeddings, dims=dims))

    def _open(self, user_id: str, trusted: bool, store: LongTermStore) -> None:
        self.user_id = check_name(user_id, "user id")
        self.trusted = bool(trusted)
        self._store: LongTermStore = store
        self._user = namespace_label(self.user_id)

    @property
    def url(self) -> str:
        """The store's URL, password masked."""
        return self._store.url

    @property
    def store(self) -> Any:
        """The LangGraph ``BaseStore`` underneath (for ``graph.compile(store=...)``)."""
        return self._store.store

    @classmethod
    def from_store(cls, store: Any, *, user_id: str, trusted: bool = False) -> LongTermMemory:
        """``user_id``'s memory in a LangGraph ``store`` already open: the ``store=`` a graph
        was compiled with (``LongTermMemory(...).store``), read inside a node through
        ``langgraph.config.get_store()``.

        Example:
            >>> memory = LongTermMemory("memory://doctest-ltm-from-store", user_id="ming")
            >>> _ = memory.remember("city", "Lyon")
            >>> same = LongTermMemory.from_store(memory.store, user_id="ming")
            >>> [f.value for f in same.facts()], same.url
            (['Lyon'], 'memory://doctest-ltm-from-store')
        """
        from .long_term_store import store_for

        other = object.__new__(cls)
        other._open(user_id, trusted, store_for(store))
        return other

    def for_user(self, user_id: str) -> LongTermMemory:
        """The same store and settings for another user (no new connection).

        Example:
            >>> a = LongTermMemory("memory://doctest-ltm-for", user_id="a")
            >>> b = a.for_user("b")
            >>> b.user_id, b.store is a.store
            ('b', True)
        """
        other = object.__new__(LongTermMemory)
        other._open(user_id, self.trusted, self._store)
        return other

    def __repr__(self) -> str:
        trusted = ", trusted=True" if self.trusted else ""
        return f"LongTermMemory({self.url!r}, user_id={self.user_id!r}{trusted})"

    # -- writing ------------------------------------------------------------------------

    def remember(
        self,
        key: str,
        value: str,
        scope: Scope = "user",
        agent: str | None = None,
        *,
        conversation_id: str | None = None,
        turn_id: str | None = None,
        source_agent: str | None = None,
        text: str | None = None,
    ) -> Fact:
        """Store ``key = value`` in ``scope`` and return the current fact.

        A new value supersedes the current one (kept in :meth:`history`); the value already
        current changes nothing and returns the stored fact. With ``turn_id``, the write is
        idempotent: the same (conversation, turn, key, value) again returns the fact it
        wrote, even after later writes superseded it.

        Raises ``ValueError`` for an empty or oversized key, value, user id or agent name (or
        NUL in any text), ``PermissionError`` for ``scope="shared"`` on an untrusted
        instance.

        Example:
            >>> memory = LongTermMemory("memory://doctest-ltm-remember", user_id="ming")
            >>> memory.remember("tone", "brief", "agent", agent="Writer").line()
            'tone: brief'
            >>> memory.remember("motto", "be kind", "shared")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            PermissionError: shared facts are read by every user and written only by trusted...
        """
        key = check_name(key, "fact key")
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"fact value must be a non-empty string, got {value!r}")
        check_text(value, "fact value", MAX_TEXT_BYTES)
        current_ns, history_ns = writable(self._user, scope, agent, trusted=self.trusted)
        ids = self._provenance(conversation_id, turn_id, source_agent)
        text = optional_text(text, "source text")
        entry = f"t-{write_key('remember', ids[0], ids[1], key, value)}" if turn_id else None
        done, current = self._store.read([GetOp(history_ns, entry or "-"), GetOp(current_ns, key)])
        if entry and isinstance(done, Item):
            if done.value.get("noop") and isinstance(current, Item):
                return Fact.from_record(current.value)  # it changed nothing: what is there
            return Fact.from_record(done.value)
        previous = Fact.from_record(current.value) if isinstance(current, Item) else None
        if previous is not None and not previous.forgotten and previous.value == value:
            if entry:  # done: so applying this turn again later can never bring it back
                self._store.write([PutOp(history_ns, entry, _applied(key), index=False)])
            return previous
        fact = Fact(
            key=key,
            value=value,
            scope=scope,
            agent=agent if scope == "agent" else None,
            user_id=None if scope == "shared" else self.user_id,
            conversation_id=ids[0],
            turn_id=ids[1],
            source_agent=ids[2],
            created_at=datetime.now(timezone.utc),
            text=text,
            version=previous.version + 1 if previous else 1,
        )
        record = fact.to_record()
        self._store.write(
            [
                PutOp(history_ns, entry or f"w-{uuid.uuid4().hex}", record, index=False),
                PutOp(current_ns, key, {**record, "memory": indexed_text(fact)}),
            ]
        )
        return fact

    def forget(
        self,
        key: str,
        scope: Scope = "user",
        agent: str | None = None,
        *,
        conversation_id: str | None = None,
        turn_id: str | None = None,
        source_agent: str | None = None,
        purge: bool = False,
    ) -> bool:
        """Remove ``key`` from recall; True if it had a current value.

        History keeps the old values and gains a tombstone (``forgotten=True``); with
        ``purge=True`` every stored value of the key is erased instead (the right to be
        forgotten). With ``turn_id``, applying the same forget again writes nothing.

        Example:
            >>> memory = LongTermMemory("memory://doctest-ltm-forget", user_id="ming")
            >>> _ = memory.remember("address", "12 Rue Neuve")
            >>> memory.forget("address", purge=True), memory.forget("address")
            (True, False)
            >>> memory.history("address")
            []
        """
        key = check_name(key, "fact key")
        current_ns, history_ns = writable(self._user, scope, agent, trusted=self.trusted)
        ids = self._provenance(conversation_id, turn_id, source_agent)
        entry = f"t-{write_key('forget', ids[0], ids[1], key)}" if turn_id else None
        done, current = self._store.read([GetOp(history_ns, entry or "-"), GetOp(current_ns, key)])
        previous = Fact.from_record(current.value) if isinstance(current, Item) else None
        had_value = previous is not None and not previous.forgotten
        if purge:
            ops = [
                PutOp(history_ns, item.key, None) for item in self._history_items(key, history_ns)
            ]
            if previous is not None:
                ops.append(PutOp(current_ns, key, None))
            if ops:
                self._store.write(ops)
            return had_value
        if entry and isinstance(done, Item):
            return False
        if previous is None or not had_value:
            if entry:  # nothing to forget now; applied again later, it must stay a no-op
                self._store.write([PutOp(history_ns, entry, _applied(key), index=False)])
            return False
        tombstone = Fact(
            key=key,
            value="",
            scope=scope,
            agent=previous.agent,
            user_id=previous.user_id,
            conversation_id=ids[0],
            turn_id=ids[1],
            source_agent=ids[2],
            created_at=datetime.now(timezone.utc),
            version=previous.version + 1,
            forgotten=True,
        ).to_record()
        # The tombstone stays as the current record too, so the next write of this key
        # goes on counting versions; recall skips it.
        self._store.write(
            [
                PutOp(history_ns, entry or f"w-{uuid.uuid4().hex}", tombstone, index=False),
                PutOp(current_ns, key, tombstone, index=False),
            ]
        )
        return True

    @staticmethod
    def _provenance(
        conversation_id: str | None, turn_id: str | None, source_agent: str | None
    ) -> tuple[str | None, str | None, str | None]:
        if conversation_id is not None:
            check_conversation_id(conversation_id)
        if turn_id is not None:
            check_name(turn_id, "turn id")
        if source_agent is not None:
            check_name(source_agent, "source agent")
        return conversation_id, turn_id, source_agent

    # -- reading ------------------------------------------------------------------------

    def _history_items(self, key: str, history_ns: tuple[str, ...]) -> list[Item]:
        """Every stored entry of ``key`` in ``history_ns``, the no-op markers included."""
        items = list_namespace(self._store.store, history_ns, key=key)
        return [i for i in items if i.value.get("key") == key]

    def facts(self, agent: str | None = None) -> list[Fact]:
        """Every current fact ``agent`` may read (no agent: user and shared facts), ordered
        by scope (agent's notes, the user's, shared), then key.

        Example:
            >>> memory = LongTermMemory("memory://doctest-ltm-facts", user_id="ming")
            >>> _ = memory.remember("b", "2"); _ = memory.remember("a", "1")
            >>> [f.key for f in memory.facts()]
            ['a', 'b']
        """
        found = [
            Fact.from_record(item.value)
            for namespace in visible(self._user, agent)
            for item in list_namespace(self._store.store, namespace)
        ]
        live = [f for f in found if not f.forgotten]
        return sorted(live, key=lambda f: (SCOPE_ORDER[f.scope], f.key))

    def all_facts(self) -> list[Fact]:
        """Every current fact of this user: every agent's notes (by agent), the user's facts,
        shared facts (what ``swarmgraph history`` shows; no agent reads all of them).

        Example:
            >>> memory = LongTermMemory("memory://doctest-ltm-all", user_id="ming")
            >>> _ = memory.remember("tone", "brief", "agent", agent="Sales")
            >>> _ = memory.remember("city", "Lyon")
            >>> [(f.key, f.agent) for f in memory.all_facts()]
            [('tone', 'Sales'), ('city', None)]
        """
        prefix = (ROOT, CURRENT, "agent", self._user)
        listing = ListNamespacesOp((MatchCondition("prefix", prefix),), limit=100_000)
        (found_ns,) = self._store.read([listing])
        notes = {  # exact labels: a prefix match may also find a longer user label
            tuple(ns)
            for ns in cast(list[tuple[str, ...]], found_ns or [])
            if len(ns) == len(prefix) + 1 and tuple(ns[:4]) == prefix
        }
        found = [
            Fact.from_record(item.value)
            for namespace in sorted(notes)
            for item in list_namespace(self._store.store, namespace)
        ]
        found = sorted((f for f in found if not f.forgotten), key=lambda f: (f.agent or "", f.key))
        return [*found, *self.facts()]

    def recall(
        self, query: str, k: int = 5, agent: str | None = None, *, ranking: Ranking | None = None
    ) -> list[Fact]:
        """The ``k`` current facts most relevant to ``query`` that ``agent`` may read.

        Visible: this user's facts, ``agent``'s notes for this user (when ``agent`` is given)
        and shared facts; never another user's, never a superseded or forgotten value.
        Lexical (default): the store's full-text index over each fact's key, value and
        source text (SQLite FTS5's ``bm25()``, Postgres ``ts_rank``, BM25 in process on
        ``memory://``); only facts sharing a word with the query, best first, ties to the
        newer fact. A query with no searchable word (``""``, "what is it?") returns the
        ``k`` newest facts. With embeddings, ``ranking`` (see :mod:`.fact_ranking`):
        ``"hybrid"`` (the default there) fuses the lexical top with the store's vector
        top, ``"vector"`` is the ``k`` most similar facts, ``"bm25"`` the lexical ranking
        alone. The store is asked for the top few only; nothing lists every fact.

        Example:
            >>> memory = LongTermMemory("memory://doctest-ltm-recall", user_id="ming")
            >>> _ = memory.remember("dog_name", "Rex", text="My dog is called Rex")
            >>> _ = memory.remember("phone", "555-0142", text="My phone number is 555-0142")
            >>> [f.value for f in memory.recall("What is my dog called?")]
            ['Rex']
            >>> [f.value for f in memory.recall("", k=1)]
            ['555-0142']
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"k must be an int >= 0, got {k!r}")
        if not isinstance(query, str):
            raise ValueError(f"query must be a string, got {type(query).__name__}")
        if k == 0:
            return []
        if agent is not None:
            check_name(agent, "agent name")
        ranking = check_ranking(ranking, vector=self._store.vector_search)
        return ranked_recall(self._store, visible(self._user, agent), query, k, ranking)

    def get(self, key: str, scope: Scope = "user", agent: str | None = None) -> Fact | None:
        """The current fact of ``key`` in ``scope`` (``None``: never written, or forgotten).

        Example:
            >>> memory = LongTermMemory("memory://doctest-ltm-get", user_id="ming")
            >>> _ = memory.remember("city", "Lyon")
            >>> memory.get("city").value, memory.get("dog")
            ('Lyon', None)
        """
        current_ns, _ = namespaces(self._user, scope, agent)
        (item,) = self._store.read([GetOp(current_ns, check_name(key, "fact key"))])
        fact = Fact.from_record(item.value) if isinstance(item, Item) else None
        return None if fact is None or fact.forgotten else fact

    def history(self, key: str, scope: Scope = "user", agent: str | None = None) -> list[Fact]:
        """Every value ``key`` has had in ``scope``, oldest first: superseded values (each with
        ``superseded_at``, when the next replaced it), then the current one last; a forget
        shows as a tombstone (``forgotten=True``, value ``""``). ``[]``: never written.

        Example:
            >>> memory = LongTermMemory("memory://doctest-ltm-history", user_id="ming")
            >>> _ = memory.remember("tier", "silver"); _ = memory.remember("tier", "gold")
            >>> [(f.value, f.version) for f in memory.history("tier")]
            [('silver', 1), ('gold', 2)]
        """
        key = check_name(key, "fact key")
        _, history_ns = namespaces(self._user, scope, agent)
        facts = [
            (item.key, Fact.from_record(item.value))
            for item in self._history_items(key, history_ns)
            if not item.value.get("noop")
        ]
        facts.sort(
            key=lambda pair: (
                pair[1].version,
                pair[1].created_at.timestamp() if pair[1].created_at else 0.0,
                pair[0],
            )
        )
        return with_spans([fact for _, fact in facts])  # each with when it was replaced


def _applied(key: str) -> dict[str, Any]:
    """The history entry of a turn's write that changed nothing (the value was already
    current, or nothing was there to forget): it marks the write as applied, so replaying the
    turn after a later change cannot undo that change. ``history`` skips it."""
    return {"key": key, "noop": True, "created_at": datetime.now(timezone.utc).isoformat()}
