"""Offline PNG pictures of LangGraph graphs: grandalf lays them out, matplotlib draws them.

LangGraph's ``draw_mermaid_png`` sends the graph to a web service by default; this module
never touches the network, so notebooks, the README picture and CI all render offline.

How to read a picture (its legend says the same):

* an agent is a rounded box in **its own colour**, computed from its name
  (:func:`agent_colour`), so an agent looks the same in every picture it appears in;
* ``start`` and ``end`` are small grey pills; an engine helper node (``dynamic_handoff``, and a
  fan-out's ``parallel_branch`` / ``parallel_join``) is a grey dashed box;
* a solid arrow is always taken; a dashed arrow is conditional (chosen at run time);
* every edge of a swarm graph says what it is: ``handoff``, a route's name, ``answers``
  (the agent replied without a tool call: the run ends), ``tool ran`` on an agent's loop (a
  tool answered and the same agent speaks again), ``entry`` / ``resume`` out of ``start``
  (a new thread starts at the entry agent; a checkpointed thread resumes at its active agent)
  and ``max_turns=0`` on ``start -> end`` (a run allowed no turn ends before any agent); a
  fan-out reads ``fan out`` (agent -> ``parallel_branch``), ``branch`` (to each agent a branch may
  run), ``answered`` (-> ``parallel_join``) and ``joined`` (back to the agent that fanned out).
  Other graphs show LangGraph's own edge labels, or those given in ``edge_labels``.

Example:
    >>> import tempfile, pathlib
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, build_swarm_graph
    >>> sales = Agent(name="Sales")
    >>> triage = Agent(name="Triage", handoffs=[sales])
    >>> app = build_swarm_graph([triage], chat_model=ScriptedChatModel([])).compile()
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "swarm.png"
    >>> draw_png(app, out) == out, out.read_bytes()[:8] == PNG_SIGNATURE
    (True, True)
"""

from __future__ import annotations

import colorsys
import hashlib
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..graph.core.types import Agent

__all__ = [
    "PNG_SIGNATURE",
    "GraphPicture",
    "agent_colour",
    "draw_figure",
    "draw_png",
    "layout_graph",
]

#: The first eight bytes of every PNG file.
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

_START, _END = "__start__", "__end__"
_DYNAMIC = "dynamic_handoff"  # the engine's helper node (graph/core/node_names.py)
_PARALLEL = ("parallel_branch", "parallel_join")  # a fan-out's (graph/node_names.HELPER_NODES)
_BORDER = "#3b3b58"
_HELPER_FILL = "#eeeeee"
_TERMINAL_FILL = "#f5f5f5"
# Layout units: one character of a label is about this wide, a box this tall.
_CHAR_W, _BOX_H, _PAD_W = 9.0, 34.0, 26.0
# Wide enough between boxes for the "tool ran" label beside a loop.
_X_GAP, _Y_GAP = 95.0, 70.0
_SCALE = 1 / 80  # inches per layout unit; the same both ways keeps the aspect true

#: What each kind of swarm edge is called in a picture (see the module docstring).
SWARM_EDGE_LABELS = {
    "handoff": "handoff",
    "answers": "answers",
    "loop": "tool ran",
    "entry": "entry",
    "resume": "resume",
    "no_turns": "max_turns=0",
}


def agent_colour(name: str) -> str:
    """The fill colour of agent ``name`` in every picture: a soft hue computed from the name.

    A hash of the name, not the order of appearance, picks the hue, so the same agent has the
    same colour in every figure and notebook; black text stays readable on it.

    Example:
        >>> agent_colour("Triage") == agent_colour("Triage"), agent_colour("Triage")[0]
        (True, '#')
        >>> agent_colour("Triage") != agent_colour("Sales")
        True
    """
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    hue = int.from_bytes(digest[:8], "big") / 2**64
    red, green, blue = colorsys.hls_to_rgb(hue, 0.83, 0.72)
    return "#" + "".join(f"{round(c * 255):02x}" for c in (red, green, blue))


@dataclass
class GraphPicture:
    """Where everything goes: node boxes (centre x, y, width, height) and edge polylines.

    ``y`` grows downwards (layer by layer), as grandalf lays it out. Each edge is
    ``(source, target, points, conditional, label)``, each loop ``(node, conditional, label)``.
    """

    boxes: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    edges: list[tuple[str, str, list[tuple[float, float]], bool, str | None]] = field(
        default_factory=list
    )
    loops: list[tuple[str, bool, str | None]] = field(default_factory=list)
    #: The text on each box (a swarm's agents show their real names, whatever their node id).
    labels: dict[str, str] = field(default_factory=dict)
    #: Nodes that are a swarm's agents (never drawn as helpers, whatever their name).
    agent_nodes: set[str] = field(default_factory=set)
    #: The fill of each box: :func:`agent_colour` of its label, grey for start/end and helpers.
    colours: dict[str, str] = field(default_factory=dict)
    #: A title for the picture when the caller gives none (``"Triage's swarm"``).
    default_title: str = "graph"

    def is_helper(self, node: str) -> bool:
        """An engine helper node (``dynamic_handoff``, a fan-out's ``parallel_branch`` and
        ``parallel_join``, a ``_private`` node): drawn grey, dashed."""
        if node in self.agent_nodes or node in (_START, _END):
            return False
        return node.startswith(("dynamic", "_")) or node in _PARALLEL


class _VertexView:
    def __init__(self, w: float, h: float) -> None:
        self.w, self.h = w, h
        self.xy = (0.0, 0.0)


class _EdgeView:
    def __init__(self) -> None:
        self.pts: list[tuple[float, float]] = []

    def setpath(self, pts: list[tuple[float, float]]) -> None:
        self.pts = [(float(x), float(y)) for x, y in pts]


def _as_drawable(graph: Any) -> Any:
    """Accept a compiled graph, an uncompiled ``StateGraph``, or a drawable ``Graph``."""
    if hasattr(graph, "nodes") and hasattr(graph, "edges") and hasattr(graph, "draw_mermaid"):
        return graph
    if hasattr(graph, "get_graph"):
        return graph.get_graph()
    if hasattr(graph, "compile"):
        return graph.compile().get_graph()
    raise TypeError(
        f"draw_png needs a compiled graph, a StateGraph or a drawable Graph, "
        f"not {type(graph).__name__}"
    )


def _label(node_id: str, node: Any, agent_names: dict[str, str]) -> str:
    if node_id in agent_names:  # a swarm's agent: its real name, not the node name it runs as
        return agent_names[node_id]
    name = getattr(node, "name", None) or node_id
    return {"__start__": "start", "__end__": "end"}.get(name, name)


def _agent_names(graph: Any) -> dict[str, str]:
    """Node name -> agent name for a swarm graph (compiled or not); ``{}`` for other graphs.

    The first entry is the entry agent: the builder names the default agent's node first.
    """
    return {node: agent.name for node, agent in agents_of(graph).items()}


def agents_of(graph: Any) -> dict[str, Agent]:
    """Node name -> agent for the agents' nodes of a graph ``build_swarm_graph`` made (the
    ``StateGraph``, the compiled graph or its drawable ``get_graph()``); ``{}`` for other graphs.
    Node names are the agents' own unless LangGraph cannot take them (see ``node_names``).

    Example:
        >>> from swarmgraph.graph import Agent, ScriptedChatModel, build_swarm_graph
        >>> first, second = Agent(name="Sales|EU"), Agent(name="Agent")
        >>> graph = build_swarm_graph([first, second], chat_model=ScriptedChatModel([]))
        >>> {node: agent.name for node, agent in agents_of(graph.compile()).items()}
        {'Sales_EU': 'Sales|EU', 'Agent': 'Agent'}
    """
    from ..graph.core.types import Agent

    found: dict[str, Agent] = {}
    for name, spec in getattr(getattr(graph, "builder", graph), "nodes", {}).items():
        runnable = getattr(spec, "runnable", None) or getattr(spec, "data", None)
        node = getattr(getattr(runnable, "func", None), "__self__", None)  # whose step it runs
        agent = getattr(node, "agent", None)
        if isinstance(agent, Agent):
            found[name] = agent
    return found


def _swarm_edge_label(source: str, target: str, entry: str | None) -> str:
    """What an unlabelled edge of a swarm graph means (see the module docstring)."""
    kind = SWARM_EDGE_LABELS
    if source == _START:
        if target == _END:
            return kind["no_turns"]
        return kind["entry"] if target == entry else kind["resume"]
    if source == target:
        return kind["loop"]
    if target == _END:
        return kind["answers"]
    return kind["handoff"]


def _edge_labeller(
    labels: Mapping[str, str],
    agent_names: Mapping[str, str],
    given: Mapping[tuple[str, str], str],
) -> Callable[[str, str, str | None], str | None]:
    """``(source, target, LangGraph's label) -> label``: given labels (keyed by node ids or by
    the names shown, ``"start"``/``"end"`` included) first, then LangGraph's own (a route's
    name), then, in a swarm graph, what the edge means."""
    entry = next(iter(agent_names), None)

    def label(source: str, target: str, data: str | None) -> str | None:
        for key in ((source, target), (labels.get(source, source), labels.get(target, target))):
            if key in given:
                return given[key]
        if data is not None:
            return data
        return _swarm_edge_label(source, target, entry) if agent_names else None

    return label


def layout_graph(
    graph: Any,
    *,
    exclude: Iterable[str] = (),
    edge_labels: Mapping[tuple[str, str], str] | None = None,
) -> GraphPicture:
    """Place the nodes and route the edges of ``graph`` (a Sugiyama layout, top to bottom).

    ``exclude`` drops nodes (and their edges) from the picture, e.g. a helper node.
    ``edge_labels`` names edges, ``{(source, target): label}``, by node id or shown name
    (``"start"``, ``"end"``); a swarm graph's edges are labelled without it.

    Example:
        >>> from swarmgraph.graph import Agent, ScriptedChatModel, build_swarm_graph
        >>> triage = Agent(name="Triage", handoffs=[Agent(name="Sales")])
        >>> pic = layout_graph(build_swarm_graph([triage], chat_model=ScriptedChatModel([])))
        >>> pic.boxes["Triage"][1] < pic.boxes["Sales"][1]   # Triage is drawn above Sales
        True
        >>> ("Triage", True, "tool ran") in pic.loops       # a tool ran: Triage speaks again
        True
        >>> sorted({label for s, t, _, _, label in pic.edges if s == "Triage"})
        ['answers', 'handoff']
        >>> pic.colours["Triage"] == agent_colour("Triage"), pic.default_title
        (True, "Triage's swarm")
    """
    from grandalf.graphs import Edge, Graph, Vertex
    from grandalf.layouts import SugiyamaLayout
    from grandalf.routing import route_with_lines

    drawable = _as_drawable(graph)
    skip = set(exclude)
    names = _agent_names(graph)
    labels = {
        nid: _label(nid, node, names) for nid, node in drawable.nodes.items() if nid not in skip
    }
    edge_label = _edge_labeller(labels, names, edge_labels or {})

    # grandalf keeps vertices and edges in sets; with the default id-based hashes their
    # order (and so the picture) changed from run to run. Stable integer hashes fix it.
    class _StableVertex(Vertex):
        def __hash__(self) -> int:
            return self._order

    class _StableEdge(Edge):
        def __hash__(self) -> int:
            return self._order

    vertices: dict[str, Any] = {}
    for order, nid in enumerate(labels):
        vertices[nid] = _StableVertex(nid)
        vertices[nid]._order = order
    for nid, vertex in vertices.items():
        small = nid in (_START, _END)
        width = len(labels[nid]) * _CHAR_W + (_PAD_W * (0.8 if small else 1.0))
        vertex.view = _VertexView(max(width, 60.0), _BOX_H * (0.8 if small else 1.0))

    entry_name = names[next(iter(names))] if names else None
    picture = GraphPicture(
        labels=labels,
        agent_nodes=set(names) - skip,
        default_title=f"{entry_name}'s swarm" if entry_name else "graph",
    )
    for nid in labels:
        terminal = nid in (_START, _END)
        helper = picture.is_helper(nid)
        fill = _TERMINAL_FILL if terminal else _HELPER_FILL if helper else None
        picture.colours[nid] = fill or agent_colour(labels[nid])
    g_edges: list[Any] = []
    for edge in drawable.edges:
        if edge.source in skip or edge.target in skip:
            continue
        data = None if edge.data is None else str(edge.data)
        label = edge_label(edge.source, edge.target, data)
        if edge.source == edge.target:
            picture.loops.append((edge.source, bool(edge.conditional), label))
            continue
        g_edge = _StableEdge(vertices[edge.source], vertices[edge.target], data=(edge, label))
        g_edge._order = len(g_edges)
        g_edge.view = _EdgeView()
        g_edges.append(g_edge)

    g = Graph(list(vertices.values()), g_edges)
    backwards = _back_edges(list(labels), g_edges)
    x_offset = 0.0
    for component in g.C:  # lay out each connected piece, then set them side by side
        sug = SugiyamaLayout(component)
        roots = [v for v in component.sV if v.data == _START] or [
            v for v in component.sV if not v.e_in()
        ]
        sug.init_all(
            roots=roots or None,
            inverted_edges=[e for e in component.sE if e in backwards],
        )
        sug.xspace, sug.yspace = _X_GAP, _Y_GAP
        sug.route_edge = route_with_lines
        sug.draw()
        xs = [v.view.xy[0] - v.view.w / 2 for v in component.sV]
        shift = x_offset - min(xs)
        for v in component.sV:
            x, y = v.view.xy
            picture.boxes[v.data] = (x + shift, y, v.view.w, v.view.h)
        x_offset = max(b[0] + b[2] / 2 for b in picture.boxes.values()) + _X_GAP * 2
        for e in component.sE:
            edge, label = e.data
            pts = [(x + shift, y) for x, y in e.view.pts]
            src = picture.boxes.get(edge.source)
            # Edges grandalf inverted to break cycles come back target-first.
            if src and pts and _dist(pts[-1], src[:2]) < _dist(pts[0], src[:2]):
                pts.reverse()
            picture.edges.append((edge.source, edge.target, pts, bool(edge.conditional), label))
    return picture


def _back_edges(order: list[str], edges: list[Any]) -> set[Any]:
    """Edges to break cycles with, so the picture reads top-down from the entry node.

    ``__start__`` of a swarm graph may jump to every agent (a resumed thread), so layers
    are counted from the first node it reaches in insertion order, the entry agent, and
    an edge that points to a node no deeper than its source is drawn upwards.
    """
    out: dict[str, list[Any]] = {}
    for e in edges:
        out.setdefault(e.data[0].source, []).append(e)
    start_targets = {e.data[0].target for e in out.get(_START, [])}
    entry = next((n for n in order if n in start_targets), None)
    depth: dict[str, int] = {_START: 0}
    queue = [entry] if entry else []
    if entry:
        depth[entry] = 1
    for node in queue:  # breadth first; queue grows while we walk it
        for e in out.get(node, []):
            target = e.data[0].target
            if target not in depth:
                depth[target] = depth[node] + 1
                queue.append(target)
    # A strict order (depth, then insertion order) keeps the kept edges acyclic.
    index = {n: i for i, n in enumerate(order)}

    def key(node: str) -> tuple[float, int]:
        if node == _END:
            return (math.inf, 0)
        return (depth.get(node, len(order)), index.get(node, 0))

    return {e for e in edges if key(e.data[0].target) < key(e.data[0].source)}


def _dist(a: tuple[float, float], b: tuple[float, float]) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def _clip(box: tuple[float, float, float, float], toward: tuple[float, float]):
    """The point where the segment from the box centre toward ``toward`` leaves the box."""
    cx, cy, w, h = box
    dx, dy = toward[0] - cx, toward[1] - cy
    if dx == 0 and dy == 0:
        return cx, cy
    scale = min(
        (w / 2 + 3) / abs(dx) if dx else math.inf,
        (h / 2 + 3) / abs(dy) if dy else math.inf,
    )
    return cx + dx * scale, cy + dy * scale


def _label_place(pts: list[tuple[float, float]], bow: float) -> tuple[float, float, str, str]:
    """Where an edge's label goes, ``(x, y, ha, va)``: the middle of its middle segment, or,
    for one of two arrows bowed apart, just outside its arc, so the pair's labels never meet."""
    if len(pts) != 2 or not bow:
        (mx, my), (nx, ny) = pts[len(pts) // 2 - 1], pts[len(pts) // 2]
        return (mx + nx) / 2, (my + ny) / 2, "center", "center"
    (x0, y0), (x1, y1) = pts
    dx, dy = x1 - x0, y1 - y0
    # matplotlib's arc3 bows in display space, where y points up; in ours y points down.
    ox, oy = -bow / 2 * dy, bow / 2 * dx
    ha = "left" if ox > 1 else "right" if ox < -1 else "center"
    va = "top" if oy > 1 else "bottom" if oy < -1 else "center"  # y grows downwards
    nudge = 4 / max(math.hypot(ox, oy), 1e-9)
    return (x0 + x1) / 2 + ox * (1 + nudge), (y0 + y1) / 2 + oy * (1 + nudge), ha, va


def _legend_entries(picture: GraphPicture) -> list[tuple[str, dict[str, Any]]]:
    """``(text, style)`` per legend line: each agent's colour, the kinds of node, the arrows."""
    entries: list[tuple[str, dict[str, Any]]] = []
    seen: set[tuple[str, str]] = set()
    for nid, label in picture.labels.items():
        if nid in (_START, _END) or picture.is_helper(nid):
            continue
        if (label, picture.colours[nid]) not in seen:  # two agents may share a name
            seen.add((label, picture.colours[nid]))
            entries.append((label, {"patch": picture.colours[nid], "edge": _BORDER}))
    if {_START, _END} & set(picture.boxes):
        entries.append(("start / end of a run", {"patch": _TERMINAL_FILL, "edge": "#888888"}))
    if any(picture.is_helper(nid) for nid in picture.boxes):
        entries.append(("engine helper node", {"patch": _HELPER_FILL, "edge": "#888888"}))
    styles = {c for *_, c, _ in picture.edges} | {c for _, c, _ in picture.loops}
    if False in styles:
        entries.append(("always taken", {"line": "solid"}))
    if True in styles:
        entries.append(("conditional: chosen at run time", {"line": (0, (4, 3))}))
    return entries


def draw_figure(
    graph: Any,
    *,
    title: str | None = None,
    exclude: Iterable[str] = (),
    edge_labels: Mapping[tuple[str, str], str] | None = None,
    font_scale: float = 1.0,
) -> Figure:
    """The picture of ``graph`` as a matplotlib ``Figure``: titled, labelled, with a legend.

    ``title`` defaults to :attr:`GraphPicture.default_title`; ``exclude`` and
    ``edge_labels`` are :func:`layout_graph`'s. :func:`draw_png` saves this figure.
    ``font_scale`` multiplies the size of every text but the boxes' names (up to 1.2x, as
    the boxes are sized for them): a wide graph shown shrunk to a page's width (every node of
    a swarm) stays readable at 1.5-2.

    Example:
        >>> from swarmgraph.graph import Agent, ScriptedChatModel, build_swarm_graph
        >>> triage = Agent(name="Triage", handoffs=[Agent(name="Sales")])
        >>> fig = draw_figure(build_swarm_graph([triage], chat_model=ScriptedChatModel([])))
        >>> [t.get_text() for t in fig.legends[0].get_texts()][:3]
        ['Triage', 'Sales', 'start / end of a run']
        >>> fig.axes[0].get_title()
        "Triage's swarm"
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

    picture = layout_graph(graph, exclude=exclude, edge_labels=edge_labels)
    boxes = picture.boxes

    # Edges routed through dummy points may stick out past the boxes; frame them too.
    points = [p for _, _, pts, _, _ in picture.edges for p in pts]
    xs = [x - w / 2 for x, _, w, _ in boxes.values()] + [p[0] - 10 for p in points]
    xe = [x + w / 2 for x, _, w, _ in boxes.values()] + [p[0] + 10 for p in points]
    ys = [y - h / 2 for _, y, _, h in boxes.values()] + [p[1] for p in points]
    ye = [y + h / 2 for _, y, _, h in boxes.values()] + [p[1] for p in points]
    # Room on the right for the loops' labels, on top for the title.
    left, right = min(xs) - 30, max(xe) + 70
    top, bottom = min(ys) - 25, max(ye) + 25

    entries = _legend_entries(picture)
    legend_w = (0.7 + 0.055 * max(len(text) for text, _ in entries)) * font_scale  # fontsize 8
    legend_h = (0.45 + 0.2 * len(entries)) * font_scale
    graph_w, graph_h = (right - left) * _SCALE, (bottom - top) * _SCALE
    title_h = 0.45 * font_scale
    fig_w, fig_h = graph_w + legend_w, max(graph_h, legend_h) + title_h
    fig = Figure(figsize=(fig_w, fig_h))
    ax = fig.add_axes((0, 0, graph_w / fig_w, graph_h / fig_h))
    ax.set_xlim(left, right)
    ax.set_ylim(bottom, top)  # y grows downwards, as in the layout
    ax.set_axis_off()
    ax.set_title(title or picture.default_title, fontsize=11 * font_scale, pad=12)

    pairs = {(s, t) for s, t, *_ in picture.edges}
    for source, target, pts, conditional, label in picture.edges:
        if len(pts) < 2:
            continue
        # A handoff both ways would draw two arrows on one line; bow them apart.
        bow = 0.18 if len(pts) == 2 and (target, source) in pairs else 0.0
        pts = list(pts)
        pts[0] = _clip(boxes[source], pts[1])
        pts[-1] = _clip(boxes[target], pts[-2])
        style = (0, (4, 3)) if conditional else "solid"
        colour = "#555577" if conditional else "#222233"
        line_x, line_y = zip(*pts[:-1], strict=True)
        if len(pts) > 2:
            ax.plot(line_x, line_y, color=colour, linestyle=style, linewidth=1.1, zorder=1)
        ax.add_patch(
            FancyArrowPatch(
                pts[-2],
                pts[-1],
                arrowstyle="-|>",
                mutation_scale=12,
                color=colour,
                linestyle=style,
                linewidth=1.1,
                shrinkA=0,
                shrinkB=0,
                connectionstyle=f"arc3,rad={bow}",
                zorder=1,
            )
        )
        if label:
            x, y, ha, va = _label_place(pts, bow)
            ax.text(
                x,
                y,
                label,
                fontsize=7 * font_scale,
                ha=ha,
                va=va,
                color="#333355",
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
                zorder=3,
            )

    for nid, conditional, label in picture.loops:
        x, y, w, h = boxes[nid]
        ax.add_patch(
            FancyArrowPatch(
                (x + w / 2, y - h / 4),
                (x + w / 2, y + h / 4),
                connectionstyle="arc3,rad=-1.6",
                arrowstyle="-|>",
                mutation_scale=10,
                color="#555577",
                linestyle=(0, (4, 3)) if conditional else "solid",
                linewidth=1.0,
                zorder=1,
            )
        )
        if label:
            ax.text(x + w / 2 + 20, y, label, fontsize=7 * font_scale, va="center", color="#333355")

    for nid, (x, y, w, h) in boxes.items():
        terminal = nid in (_START, _END)
        plain = terminal or picture.is_helper(nid)
        ax.add_patch(
            FancyBboxPatch(
                (x - w / 2, y - h / 2),
                w,
                h,
                boxstyle=f"round,pad=0,rounding_size={h / 2 if terminal else 8}",
                facecolor=picture.colours[nid],
                edgecolor="#888888" if plain else _BORDER,
                linestyle=(0, (3, 2)) if plain and not terminal else "solid",
                linewidth=1.0 if plain else 1.4,
                zorder=2,
            )
        )
        ax.text(
            x,
            y,
            picture.labels.get(nid, nid),
            ha="center",
            va="center",
            fontsize=(8 if plain else 10) * min(font_scale, 1.2),  # boxes are sized for 10
            fontweight="normal" if plain else "bold",
            color="#666666" if plain else "#111122",
            zorder=4,
        )

    handles = [
        Patch(facecolor=style["patch"], edgecolor=style["edge"], label=text)
        if "patch" in style
        else Line2D([0], [0], color="#555577", linestyle=style["line"], label=text)
        for text, style in entries
    ]
    fig.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(graph_w / fig_w, 1 - title_h / fig_h),
        fontsize=8 * font_scale,
        frameon=False,
        title="legend",
        title_fontsize=8 * font_scale,
        alignment="left",
    )
    return fig


def draw_png(
    graph: Any,
    path: str | Path,
    *,
    title: str | None = None,
    exclude: Iterable[str] = (),
    edge_labels: Mapping[tuple[str, str], str] | None = None,
    dpi: int = 150,
    font_scale: float = 1.0,
) -> Path:
    """Render ``graph`` to a PNG file at ``path``, offline, and return the path.

    ``graph`` is a compiled LangGraph graph, an uncompiled ``StateGraph`` (compiled without
    a checkpointer just to be drawn), or the drawable ``Graph`` from ``app.get_graph()``.
    The picture is :func:`draw_figure`'s: a title (``title``, else a default), one colour
    per agent, labelled edges and a legend; ``exclude`` hides nodes; ``font_scale``
    enlarges every text (see :func:`draw_figure`).

    Example:
        >>> import tempfile, pathlib
        >>> from langgraph.graph import END, START, StateGraph
        >>> from typing_extensions import TypedDict
        >>> class S(TypedDict):
        ...     x: int
        >>> b = StateGraph(S)
        >>> _ = b.add_node("double", lambda s: {"x": s["x"] * 2})
        >>> _ = b.add_edge(START, "double")
        >>> _ = b.add_edge("double", END)
        >>> out = draw_png(b, pathlib.Path(tempfile.mkdtemp()) / "g.png", title="tiny",
        ...                edge_labels={("double", "end"): "doubled"})
        >>> out.stat().st_size > 1000
        True
    """
    fig = draw_figure(
        graph, title=title, exclude=exclude, edge_labels=edge_labels, font_scale=font_scale
    )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # No "Software" stamp: the same graph gives the same bytes across matplotlib versions.
    fig.savefig(path, format="png", dpi=dpi, facecolor="white", metadata={"Software": None})
    return path
