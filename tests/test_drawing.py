"""The offline PNG renderer: real files, real layout, no network."""

from __future__ import annotations

import socket

import pytest
from langgraph.graph import END, START, StateGraph
from swarmgraph.graph import ScriptedChatModel, build_swarm_graph
from typing_extensions import TypedDict

from swarmgraph.app.demo import demo_agents
from swarmgraph.app.drawing import PNG_SIGNATURE, draw_png, layout_graph


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
