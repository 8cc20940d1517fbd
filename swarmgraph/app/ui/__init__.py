"""``swarmgraph ui``: a local page showing a running swarm's messages and context side by
side, live; its wire is the AG-UI protocol (``POST /agui``, server-sent events), and a run's
events can be rejoined after a reconnect. Needs the ``ui`` extra (``ag-ui-protocol``).

:mod:`.server` (HTTP), :mod:`.service` (conversations and runs), :mod:`.turn` (one turn in
its own thread), :mod:`.events` (replies and graph steps as AG-UI events), :mod:`.steps`
(the page's middleware, the run's own for a turn, and the token handler), :mod:`.runs`
(rejoinable runs, their events kept in the conversation's store: ``swarmgraph.memory.turn_events``),
:mod:`.messages` (stored messages, marked), :mod:`.command` (the command and its restarts).
The page is ``static/`` (plain HTML, CSS and JavaScript; nothing fetched from elsewhere).
"""
