"""Offline PNG pictures of LangGraph graphs: grandalf lays them out, matplotlib draws them.

LangGraph's ``draw_mermaid_png`` sends the graph to a web service by default; this module
never touches the network, so notebooks, the README picture and CI all render offline.
Agents are rounded boxes, ``__start__``/``__end__`` are small grey pills, solid arrows are
plain edges and dashed arrows are conditional edges (in a swarm: every handoff), and an
edge back into its own node is drawn as a small loop ("tools ran, the agent speaks again").

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

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["PNG_SIGNATURE", "GraphPicture", "draw_png", "layout_graph"]

#: The first eight bytes of every PNG file.
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

_START, _END = "__start__", "__end__"
# Soft colours that keep black text readable; agents get one each, in order of appearance.
_PALETTE = (
    "#cfe2ff",
    "#d1f2d9",
    "#ffe5c2",
    "#f3d1f4",
    "#fff3b0",
    "#d7f0f5",
    "#f9d3d3",
    "#e3dcfb",
)
_BORDER = "#3b3b58"
_HELPER_FILL = "#eeeeee"
# Layout units: one character of a label is about this wide, a box this tall.
_CHAR_W, _BOX_H, _PAD_W = 9.0, 34.0, 26.0
_X_GAP, _Y_GAP = 40.0, 70.0


@dataclass
class GraphPicture:
    """Where everything goes: node boxes (centre x, y, width, height) and edge polylines.

    ``y`` grows downwards (layer by layer), as grandalf lays it out.
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
    """Node name -> agent name for a swarm graph (compiled or not); ``{}`` for other graphs."""
    from ..graph.builder import agents_of

    return {node: agent.name for node, agent in agents_of(graph).items()}


def layout_graph(graph: Any, *, exclude: Iterable[str] = ()) -> GraphPicture:
    """Place the nodes and route the edges of ``graph`` (a Sugiyama layout, top to bottom).

    ``exclude`` drops nodes (and their edges) from the picture, e.g. a helper node.

    Example:
        >>> from swarmgraph.graph import Agent, ScriptedChatModel, build_swarm_graph
        >>> triage = Agent(name="Triage", handoffs=[Agent(name="Sales")])
        >>> pic = layout_graph(build_swarm_graph([triage], chat_model=ScriptedChatModel([])))
        >>> pic.boxes["Triage"][1] < pic.boxes["Sales"][1]   # Triage is drawn above Sales
        True
        >>> ("Triage", True, None) in pic.loops              # tools ran: Triage speaks again
        True
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

    # grandalf keeps vertices and edges in sets; with the default id-based hashes their
    # order (and so the picture) changed from run to run. Stable integer hashes fix it.
    class _StableVertex(Vertex):
        def __hash__(self) -> int:
            return self._order

    class _StableEdge(Edge):
        def __hash__(self) -> int:
            return self._order

    vertices = {}
    for order, nid in enumerate(labels):
        vertices[nid] = _StableVertex(nid)
        vertices[nid]._order = order
    for nid, vertex in vertices.items():
        small = nid in (_START, _END)
        width = len(labels[nid]) * _CHAR_W + (_PAD_W * (0.8 if small else 1.0))
        vertex.view = _VertexView(max(width, 60.0), _BOX_H * (0.8 if small else 1.0))

    picture = GraphPicture(labels=labels, agent_nodes=set(names) - skip)
    g_edges: list[Any] = []
    for edge in drawable.edges:
        if edge.source in skip or edge.target in skip:
            continue
        data = None if edge.data is None else str(edge.data)
        if edge.source == edge.target:
            picture.loops.append((edge.source, bool(edge.conditional), data))
            continue
        g_edge = _StableEdge(vertices[edge.source], vertices[edge.target], data=(edge, data))
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
            edge, data = e.data
            pts = [(x + shift, y) for x, y in e.view.pts]
            src = picture.boxes.get(edge.source)
            # Edges grandalf inverted to break cycles come back target-first.
            if src and pts and _dist(pts[-1], src[:2]) < _dist(pts[0], src[:2]):
                pts.reverse()
            picture.edges.append((edge.source, edge.target, pts, bool(edge.conditional), data))
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


def draw_png(
    graph: Any,
    path: str | Path,
    *,
    title: str | None = None,
    exclude: Iterable[str] = (),
    dpi: int = 150,
) -> Path:
    """Render ``graph`` to a PNG file at ``path``, offline, and return the path.

    ``graph`` is a compiled LangGraph graph, an uncompiled ``StateGraph`` (compiled without
    a checkpointer just to be drawn), or the drawable ``Graph`` from ``app.get_graph()``.
    Conditional edges are dashed; self-edges are small loops; ``exclude`` hides nodes.

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
        >>> out = draw_png(b, pathlib.Path(tempfile.mkdtemp()) / "g.png", title="tiny")
        >>> out.stat().st_size > 1000
        True
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    picture = layout_graph(graph, exclude=exclude)
    path = Path(path)
    boxes = picture.boxes
    colours: dict[str, str] = {}
    for nid in boxes:
        if nid not in (_START, _END):
            colours[nid] = _PALETTE[len(colours) % len(_PALETTE)]

    # Edges routed through dummy points may stick out past the boxes; frame them too.
    points = [p for _, _, pts, _, _ in picture.edges for p in pts]
    xs = [x - w / 2 for x, _, w, _ in boxes.values()] + [p[0] - 10 for p in points]
    xe = [x + w / 2 for x, _, w, _ in boxes.values()] + [p[0] + 10 for p in points]
    ys = [y - h / 2 for _, y, _, h in boxes.values()] + [p[1] for p in points]
    ye = [y + h / 2 for _, y, _, h in boxes.values()] + [p[1] for p in points]
    left, right = min(xs) - 30, max(xe) + 50
    top, bottom = min(ys) - (50 if title else 25), max(ye) + 25
    scale = 1 / 80  # layout units per inch; the same both ways keeps the aspect true
    fig = Figure(figsize=((right - left) * scale, (bottom - top) * scale))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(left, right)
    ax.set_ylim(bottom, top)  # y grows downwards, as in the layout
    ax.set_axis_off()

    pairs = {(s, t) for s, t, *_ in picture.edges}
    for source, target, pts, conditional, data in picture.edges:
        if len(pts) < 2:
            continue
        # A handoff both ways would draw two arrows on one line; bow them apart.
        bow = 0.18 if len(pts) == 2 and (target, source) in pairs else 0.0
        pts = list(pts)
        pts[0] = _clip(boxes[source], pts[1])
        pts[-1] = _clip(boxes[target], pts[-2])
        style = (0, (4, 3)) if conditional else "solid"
        colour = "#555577" if conditional else "#222233"
        line_xs, line_ys = zip(*pts[:-1], strict=True)
        if len(pts) > 2:
            ax.plot(line_xs, line_ys, color=colour, linestyle=style, linewidth=1.1, zorder=1)
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
        if data:
            mx, my = pts[len(pts) // 2 - 1] if len(pts) > 2 else pts[0]
            nx, ny = pts[len(pts) // 2]
            ax.text(
                (mx + nx) / 2,
                (my + ny) / 2,
                data,
                fontsize=7,
                ha="center",
                va="center",
                color="#333355",
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
                zorder=3,
            )

    for nid, conditional, data in picture.loops:
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
        if data:
            ax.text(x + w / 2 + 22, y, data, fontsize=7, va="center", color="#333355")

    for nid, (x, y, w, h) in boxes.items():
        terminal = nid in (_START, _END)
        helper = nid not in picture.agent_nodes and (
            nid.startswith("dynamic") or nid.startswith("_")
        )
        fill = "#f5f5f5" if terminal else (_HELPER_FILL if helper else colours[nid])
        ax.add_patch(
            FancyBboxPatch(
                (x - w / 2, y - h / 2),
                w,
                h,
                boxstyle=f"round,pad=0,rounding_size={h / 2 if terminal else 8}",
                facecolor=fill,
                edgecolor="#888888" if terminal or helper else _BORDER,
                linestyle=(0, (3, 2)) if helper and not terminal else "solid",
                linewidth=1.0 if terminal or helper else 1.4,
                zorder=2,
            )
        )
        ax.text(
            x,
            y,
            picture.labels.get(nid, nid),
            ha="center",
            va="center",
            fontsize=8 if terminal or helper else 10,
            fontweight="normal" if terminal or helper else "bold",
            color="#666666" if terminal or helper else "#111122",
            zorder=4,
        )
    if title:
        ax.text((left + right) / 2, top + 22, title, ha="center", va="center", fontsize=11)

    path.parent.mkdir(parents=True, exist_ok=True)
    # No "Software" stamp: the same graph gives the same bytes across matplotlib versions.
    fig.savefig(path, format="png", dpi=dpi, facecolor="white", metadata={"Software": None})
    return path
