"""Issue 30, branch effects: a fan-out *inside* a branch (nested) is not resumed after a crash
(docs/parallel.md, docs/storage.md say so). What this pins: such a crash is not silent. The
turn is listed in ``session.unfinished`` even when the nested call was the turn's first
effect, its retry needs no message, and it warns, naming the tool, the call and the branch,
that the call may have happened and that the retry's call there is a new effect."""

from __future__ import annotations

import warnings

import pytest
from swarmgraph.graph import effect

from swarmgraph import Agent, Parallel, ScriptedChatModel, Session, Swarm, scripted_tool_call


class _Crash(BaseException):
    """A process dying mid-turn, in process: no ``except Exception`` catches it, no save runs."""


def _nested_desk(
    crash: set[str], keys: list[str], *, logs: list[str] | None = None
) -> tuple[Agent, Swarm]:
    """Desk fans out to Middle, whose tool fans out to Payer, whose ``pay`` is an effect.
    With ``logs``, Desk first calls ``log``, an effect of its own (so the turn is open before
    the fan-out)."""

    @effect
    def pay(idempotency_key: str = "") -> str:
        """Pay the order."""
        keys.append(idempotency_key)
        if "pay" in crash:
            crash.discard("pay")
            raise _Crash
        return "paid"

    def calls(tool: str, done: str):  # a model that calls ``tool`` once, then answers
        def answer(messages: list) -> object:
            last = messages[-1]
            return (
                done
                if last.type == "tool" and last.name == tool
                else scripted_tool_call(tool, id=f"{tool}-1")
            )

        return ScriptedChatModel(respond=answer)

    payer = Agent(name="Payer", model="payer", functions=[pay])

    def split() -> Parallel:
        """Split the work."""
        return Parallel(payer)

    middle = Agent(name="Middle", model="middle", functions=[split])

    def ask() -> Parallel:
        """Ask the middle desk."""
        return Parallel(middle)

    @effect
    def log() -> str:
        """Log the request."""
        assert logs is not None
        logs.append("logged")
        return "logged"

    def desk_answer(messages: list) -> object:
        last = messages[-1]
        if last.type == "tool":
            return "Summed up." if last.name == "ask" else scripted_tool_call("ask", id="ask-1")
        return scripted_tool_call("log" if logs is not None else "ask", id="first-1")

    desk = Agent(name="Desk", model="desk", functions=[log, ask])
    models = {
        "desk": ScriptedChatModel(respond=desk_answer),
        "middle": calls("split", "Middle done."),
        "payer": calls("pay", "Payer done."),
    }
    return desk, Swarm(chat_model=models.__getitem__)


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'chat.db'}"


@pytest.mark.parametrize("first", ["nested call", "an effect before the fan-out"])
def test_a_crash_in_a_nested_fan_out_is_listed_unfinished_and_its_retry_warns(url, first):
    keys: list[str] = []
    logs: list[str] | None = [] if first != "nested call" else None
    desk, swarm = _nested_desk({"pay"}, keys, logs=logs)
    with pytest.raises(_Crash):
        Session("c", url=url).run(swarm, desk, "pay order 7", turn_id="t")
    assert len(keys) == 1  # the payment started, then the process died
    assert Session("c", url=url).unfinished == ["t"]  # it used to be [] (silent)
    with pytest.warns(RuntimeWarning) as caught:
        response = Session("c", url=url).run(swarm, desk, turn_id="t")  # no message needed
    (said,) = [str(w.message) for w in caught if "cut short" in str(w.message)]
    assert "started pay (call 'pay-1' in branch 'Middle/Payer')" in said
    assert "new effect" in said
    # the documented limit, as it is: the retry asked the models again, a new call ran
    assert len(keys) == 2 and keys[0] != keys[1]
    assert response.messages[-1]["content"] == "Summed up."
    assert logs in (None, ["logged"])  # the effect before the fan-out is replayed, not rerun
    stored = Session("c", url=url)
    assert stored.unfinished == [] and stored.pending == []
    assert [m.content for m in stored.messages if m.type == "human"] == ["pay order 7"]


def test_a_nested_fan_out_that_finishes_leaves_nothing_open_and_no_warning(url):
    keys: list[str] = []
    desk, swarm = _nested_desk(set(), keys)
    Session("c", url=url).run(swarm, desk, "pay order 7", turn_id="t")
    assert Session("c", url=url).unfinished == [] and len(keys) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the next turn is not told of a crash that never was
        response = Session("c", url=url).run(swarm, desk, "and order 8")
    assert response.messages[-1]["content"] == "Summed up." and len(keys) == 2
