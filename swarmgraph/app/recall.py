"""Tokens for what is remembered: what each memory policy costs and what it lets the model see.

The experiment behind notebook 04's last section and ``make bench``'s "tokens for what is
remembered" (``benchmarks/__main__.py``). It lives in the package, next to the demo, so the
notebook imports it wherever swarmgraph is installed.

A scripted 200-turn conversation (``turns``): the user states 10 key facts in the first 10
turns, chats about other things, and in the last 10 turns asks about each fact. For each
policy we count the tokens sent over the whole conversation (the model's prompt, plus the
summariser's input for ``summary``) and how many facts are *in the prompt* on the turn that
asks for them (the fact's value appears in some message the model was given). The scripted
model does not answer from memory, so "kept" means "the model could have answered".

Policies: ``buffer`` (everything), ``window:20``, ``tokens:1000``, ``summary:10`` (a lossy
scripted summariser with a fixed 120-word budget that keeps each evicted user message's first
sentence, newest first, as a real summary of bounded size forgets older details), and
``context+window:4``: the facts extracted into ``context_variables`` by
:func:`swarmgraph.memory.extract.extract_context` (rules, no model) and shown by the agent's
instructions, with only the last 4 messages as history.

Example:
    >>> out = run_recall(turns=30, plot_path=None)
    >>> out["policies"]["buffer"]["facts_kept"], out["policies"]["context+window:4"]["facts_kept"]
    (10, 10)
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from ..graph import Agent, ScriptedChatModel, Swarm

#: field -> (what the user says, the value that must reach the prompt, the question asked)
FACTS: dict[str, tuple[str, str, str]] = {
    "name": ("My name is Ming Okafor.", "Ming Okafor", "What is my name?"),
    "order_id": ("My order number is 48213.", "48213", "What is my order number?"),
    "city": ("I live in Lyon.", "Lyon", "Which city do I live in?"),
    "phone": ("My phone number is 555-0142.", "555-0142", "What is my phone number?"),
    "email": ("My email is ming@example.org.", "ming@example.org", "What is my email?"),
    "pet": ("My dog is called Biscuit.", "Biscuit", "What is my dog called?"),
    "birthday": ("My birthday is 12 March.", "12 March", "When is my birthday?"),
    "delivery_day": ("Deliveries suit me on Tuesday.", "Tuesday", "Which day suits me?"),
    "tier": ("My account tier is platinum.", "platinum", "What is my account tier?"),
    "colour": ("I want the kettle in teal.", "teal", "Which colour did I want?"),
}

RULES = {
    "name": r"My name is ([A-Z]\w+ [A-Z]\w+)",
    "order_id": r"order number is (\d+)",
    "city": r"I live in ([A-Z]\w+)",
    "phone": r"phone number is ([\d-]+)",
    "email": r"email is ([\w.@]+\w)",
    "pet": r"dog is called (\w+)",
    "birthday": r"birthday is (\d+ [A-Z]\w+)",
    "delivery_day": r"suit me on (\w+day)",
    "tier": r"tier is (\w+)",
    "colour": r"kettle in (\w+)",
}


class Facts(BaseModel):
    name: str | None = None
    order_id: str | None = None
    city: str | None = None
    phone: str | None = None
    email: str | None = None
    pet: str | None = None
    birthday: str | None = None
    delivery_day: str | None = None
    tier: str | None = None
    colour: str | None = None


FILLER = (
    "Turn {i}: the tracking page for my parcel still says pending; could you check where it "
    "is and whether the courier can leave it with a neighbour if I am out?"
)
ANSWER = (
    "I checked: the parcel left the depot this morning and should arrive within two days. "
    "The courier can leave it with a neighbour; I have added that note to the delivery."
)
INSTRUCTIONS = "You are a helpful shop assistant."
SUMMARY_WORDS = 120
#: The benchmark's goal (``benchmarks/report.py``): some policy keeps every fact for at most
#: this share of buffer's tokens. ``make bench``'s chart draws it as a dotted red line.
TARGET_SHARE = 0.15


def script(turns: int) -> list[tuple[str, str | None]]:
    """``(user text, fact asked about or None)`` per turn: facts first, questions last."""
    turns = max(turns, 2 * len(FACTS))
    said = [(text, None) for text, _, _ in FACTS.values()]
    asked = [(question, field) for field, (_, _, question) in FACTS.items()]
    filler = [(FILLER.format(i=i), None) for i in range(turns - len(said) - len(asked))]
    return [*said, *filler, *asked]


def _summariser() -> ScriptedChatModel:
    """A bounded, lossy summary: the first sentence of each user line, newest kept first."""

    def respond(messages: list) -> str:
        body = messages[-1].content
        previous, _, new = body.partition("\n\nNew lines:\n")
        previous = previous.removeprefix("Existing summary:\n").replace("(none yet)", "")
        notes = [p.strip() for p in previous.split(" | ") if p.strip()]
        for line in new.splitlines():
            if line.lower().startswith(("user:", "human:")):
                text = line.split(":", 1)[1].strip()
                notes.append(text.split(". ")[0].split("? ")[0][:90])
        kept: list[str] = []
        words = 0
        for note in reversed(notes):  # newest first until the budget is spent
            words += len(note.split())
            if words > SUMMARY_WORDS:
                break
            kept.append(note)
        return " | ".join(reversed(kept))

    return ScriptedChatModel([], respond=respond)


def _context_instructions(context: dict) -> str:
    known = "; ".join(f"{k}: {context[k]}" for k in FACTS if context.get(k))
    return f"{INSTRUCTIONS} Known about this customer: {known or 'nothing yet'}."


def policies() -> dict[str, tuple[Callable[[], Any], bool]]:
    """name -> (memory policy factory, extracts facts into context)."""
    from ..memory import BufferMemory, SummaryMemory, TokenTrimMemory, WindowMemory

    return {
        "buffer": (BufferMemory, False),
        "window:20": (lambda: WindowMemory(20), False),
        "tokens:1000": (lambda: TokenTrimMemory(1000), False),
        "summary:10": (lambda: SummaryMemory(_summariser(), keep_last=10), False),
        "context+window:4": (lambda: WindowMemory(4), True),
    }


def _prompt_text(call: list) -> str:
    return "\n".join(str(m.content) for m in call)


def run_recall(*, turns: int = 200, plot_path: str | None = None) -> dict[str, Any]:
    """Total tokens and facts in the prompt when asked, per policy (and the Pareto chart)."""
    from ..memory import Session
    from ..memory.extract import extract_context

    lines = script(turns)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        url = "sqlite:///" + os.path.join(tmp, "recall.db")
        for name, (make, extracts) in policies().items():
            model = ScriptedChatModel([], respond=lambda messages: ANSWER)
            swarm = Swarm(chat_model=model)
            instructions = _context_instructions if extracts else INSTRUCTIONS
            agent = Agent(name="Helper", instructions=instructions)
            session = Session(f"recall-{name}", url=url, memory=make())
            tokens, kept = 0, []
            for text, asked in lines:
                context = extract_context(text, Facts, rules=RULES) if extracts else None
                session.run(swarm, agent, text, context_variables=context)
                usage = session.last_usage
                tokens += int(usage["input_tokens"]) + int(usage.get("summary_input_tokens", 0))
                if asked is not None and FACTS[asked][1] in _prompt_text(model.calls[-1]):
                    kept.append(asked)
                if len(model.calls) > 50:
                    del model.calls[:-1]  # the prompt checked is always the latest
            results[name] = {"total_tokens": tokens, "facts_kept": len(kept), "kept": kept}
    buffer = results["buffer"]["total_tokens"]
    for row in results.values():
        row["share_of_buffer"] = row["total_tokens"] / buffer
    best = min(
        (r["share_of_buffer"], n) for n, r in results.items() if r["facts_kept"] == len(FACTS)
    )
    if plot_path:
        plot_pareto(results, plot_path, target_share=TARGET_SHARE)
    return {
        "turns": len(lines),
        "facts": len(FACTS),
        "policies": results,
        "cheapest_all_facts": {"policy": best[1], "share_of_buffer": best[0]},
        "plot": plot_path,
    }


def pareto_front(results: dict[str, Any]) -> list[str]:
    """Policies no other policy beats on both fewer tokens and more facts kept."""
    front = []
    for name, r in results.items():
        beaten = any(
            o["total_tokens"] <= r["total_tokens"]
            and o["facts_kept"] >= r["facts_kept"]
            and (o["total_tokens"], o["facts_kept"]) != (r["total_tokens"], r["facts_kept"])
            for o in results.values()
        )
        if not beaten:
            front.append(name)
    return front


def plot_pareto(results: dict[str, Any], path: str, *, target_share: float | None = None) -> None:
    """Tokens (share of buffer's) against facts kept, one point per policy, the Pareto front
    in green; ``target_share`` adds the benchmark's goal as a labelled dotted red line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    front = set(pareto_front(results))
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    stacked: dict[int, int] = {}  # labels of points at one height go one above the other
    for name, r in sorted(results.items(), key=lambda item: item[1]["share_of_buffer"]):
        x, y = r["share_of_buffer"] * 100, r["facts_kept"]
        ax.scatter([x], [y], s=60, color="tab:green" if name in front else "tab:grey", zorder=3)
        level = stacked.get(y, 0)
        stacked[y] = level + 1
        right = x > 70  # near the right edge the label goes on the left of its point
        ax.annotate(
            name,
            (x, y),
            textcoords="offset points",
            xytext=(-6 if right else 6, -16 - 13 * level if right else 6 + 13 * level),
            ha="right" if right else "left",
        )
    line = sorted(
        (r["share_of_buffer"] * 100, r["facts_kept"]) for n, r in results.items() if n in front
    )
    ax.plot([p[0] for p in line], [p[1] for p in line], color="tab:green", linewidth=1, zorder=2)
    if target_share is not None:
        goal = target_share * 100
        ax.axvline(goal, color="tab:red", linestyle=":", linewidth=1)
        ax.text(goal + 0.8, len(FACTS) / 2, f"goal: all facts at ≤{goal:.0f}%", color="tab:red")
    ax.set_xlabel("tokens sent over the conversation, % of buffer")
    ax.set_ylabel(f"facts in the prompt when asked (of {len(FACTS)})")
    ax.set_ylim(-0.5, len(FACTS) + 0.8)
    ax.set_xlim(0, 105)
    ax.set_title("Tokens vs facts kept, by memory policy (green: Pareto front)")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":  # pragma: no cover
    import json

    print(json.dumps(run_recall(), indent=1))
