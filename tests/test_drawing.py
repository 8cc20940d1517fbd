"""The offline PNG renderer: real files, real layout, no network."""

from __future__ import annotations

import socket

import pytest
from langgraph.graph import END, START, StateGraph
from matplotlib.colors import to_rgba
from swarmgraph.graph import Agent, Route, ScriptedChatModel, build_swarm_graph
from typing_extensions import TypedDict

from swarmgraph.app.demo import demo_agents
from swarmgraph.app.drawing import (
    PNG_SIGNATURE,
    agent_colour,
    draw_figure,
    draw_png,
    layout_graph,
)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("draw_png tried to open a network connection")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


def _demo_builder():
    return build_swarm_graph(list(demo_agents()), chat_model=ScriptedChatModel([]))


def test_demo_graph_png_offline(tmp_path, no_network):
    out = draw_png(_demo_builder().compile(), tmp_path / "sub" / "demo.png", title="demo")
    width, height = _png_size(out.read_bytes())
    assert width > 200 and height > 200


def test_accepts_builder_compiled_and_drawable(tmp_path):
    builder = _demo_builder()
    for i, thing in enumerate([builder, builder.compile(), builder.compile().get_graph()]):
        assert _png_size(draw_png(thing, tmp_path / f"{i}.png").read_bytes())[0] > 0


def test_layout_places_every_node_and_edge():
    picture = layout_graph(_demo_builder())
    assert set(picture.boxes) == {
        "__start__",
        "Triage",
        "Sales",
        "Refunds",
        "dynamic_handoff",
        "__end__",
    }
    pairs = {(s, t) for s, t, *_ in picture.edges}
    assert {("Triage", "Sales"), ("Triage", "Refunds"), ("Sales", "Triage")} <= pairs
    assert {name for name, *_ in picture.loops} == {"Triage", "Sales", "Refunds", "dynamic_handoff"}
    # entry at the top, end at the bottom, handoff targets below the entry agent
    y = {name: box[1] for name, box in picture.boxes.items()}
    assert y["__start__"] < y["Triage"] < y["Sales"] < y["__end__"]
    assert y["Triage"] < y["Refunds"]

    # every routed edge starts on its source box and ends on its target box
    def on_box(point, name):
        x, y, w, h = picture.boxes[name]
        return abs(point[0] - x) <= w / 2 + 1 and abs(point[1] - y) <= h / 2 + 1

    for source, target, pts, *_ in picture.edges:
        assert on_box(pts[0], source), (source, target)
        assert on_box(pts[-1], target), (source, target)


def test_exclude_hides_a_node_and_its_edges():
    picture = layout_graph(_demo_builder(), exclude=["dynamic_handoff"])
    assert "dynamic_handoff" not in picture.boxes
    assert all("dynamic_handoff" not in (s, t) for s, t, *_ in picture.edges)


def test_plain_stategraph_with_solid_edges(tmp_path):
    class S(TypedDict):
        x: int

    b = StateGraph(S)
    b.add_node("a", lambda s: {"x": 1})
    b.add_node("b", lambda s: {"x": 2})
    b.add_edge(START, "a")
    b.add_edge("a", "b")
    b.add_edge("b", END)
    picture = layout_graph(b)
    assert [(s, t, c) for s, t, _, c, _ in picture.edges if s == "a"] == [("a", "b", False)]
    assert _png_size(draw_png(b, tmp_path / "p.png").read_bytes())[1] > 0


def test_rejects_something_that_is_not_a_graph(tmp_path):
    with pytest.raises(TypeError, match="compiled graph"):
        draw_png(42, tmp_path / "x.png")


# -- one colour per agent, a legend, labelled edges, a title ------------------------------


def _texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def _legend(fig) -> dict[str, tuple[float, ...]]:
    """Legend text -> the facecolour of its patch (lines: their colour)."""
    (legend,) = fig.legends
    colour = {}
    for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
        face = handle.get_facecolor() if hasattr(handle, "get_facecolor") else handle.get_color()
        colour[text.get_text()] = tuple(to_rgba(face))
    return colour


def test_an_agent_has_the_same_colour_in_two_different_graphs():
    sales = Agent(name="Sales")
    other = build_swarm_graph(
        [Agent(name="Desk", handoffs=[Agent(name="Sales")])], chat_model=ScriptedChatModel([])
    )
    demo, desk = _legend(draw_figure(_demo_builder())), _legend(draw_figure(other))
    assert demo["Sales"] == desk["Sales"] == to_rgba(agent_colour(sales.name))
    assert demo["Sales"] != demo["Triage"] and desk["Sales"] != desk["Desk"]
    # and in the layout: a colour from the name, not from the order the agents appear in
    assert layout_graph(other).colours["Sales"] == layout_graph(_demo_builder()).colours["Sales"]


def test_the_legend_names_every_agent_and_each_kind_of_arrow(tmp_path):
    class S(TypedDict):
        x: int

    b = StateGraph(S)
    b.add_node("a", lambda s: {"x": 1})
    b.add_edge(START, "a")
    b.add_edge("a", END)
    assert list(_legend(draw_figure(b))) == ["a", "start / end of a run", "always taken"]
    names = list(_legend(draw_figure(_demo_builder())))
    assert names[:3] == ["Triage", "Sales", "Refunds"]
    assert "conditional: chosen at run time" in names and "engine helper node" in names
    excluded = list(_legend(draw_figure(_demo_builder(), exclude=["dynamic_handoff"])))
    assert "engine helper node" not in excluded


def test_swarm_edges_are_labelled_with_what_they_mean():
    fig = draw_figure(_demo_builder(), exclude=["dynamic_handoff"])
    texts = _texts(fig)
    # 4 handoffs (Triage <-> Sales, Triage <-> Refunds), one "answers" and one loop per agent,
    # start enters at Triage or resumes at another agent, and max_turns=0 ends at once
    assert texts.count("handoff") == 4
    assert texts.count("answers") == 3 and texts.count("tool ran") == 3
    assert texts.count("entry") == 1 and texts.count("resume") == 2
    assert texts.count("max_turns=0") == 1
    picture = layout_graph(_demo_builder(), exclude=["dynamic_handoff"])
    by_edge = {(s, t): label for s, t, _, _, label in picture.edges}
    assert by_edge[("__start__", "Triage")] == "entry"
    assert by_edge[("__start__", "__end__")] == "max_turns=0"
    assert by_edge[("Sales", "Triage")] == "handoff"
    assert by_edge[("Refunds", "__end__")] == "answers"


def test_a_route_edge_carries_the_routes_name_and_given_labels_win():
    desk = Agent(name="Desk")
    approver = Agent(name="Approver", routes=[Route(when=lambda c: True, to=desk, name="approved")])
    builder = build_swarm_graph([approver], chat_model=ScriptedChatModel([]))
    assert "approved" in _texts(draw_figure(builder))
    relabelled = draw_figure(
        builder, exclude=["dynamic_handoff"], edge_labels={("Approver", "end"): "replies"}
    )
    assert "replies" in _texts(relabelled) and _texts(relabelled).count("answers") == 1


def test_every_figure_has_a_title():
    assert draw_figure(_demo_builder()).axes[0].get_title() == "Triage's swarm"
    assert draw_figure(_demo_builder(), title="demo").axes[0].get_title() == "demo"

    class S(TypedDict):
        x: int

    b = StateGraph(S)
    b.add_node("a", lambda s: {"x": 1})
    b.add_edge(START, "a")
    assert draw_figure(b).axes[0].get_title() == "graph"
