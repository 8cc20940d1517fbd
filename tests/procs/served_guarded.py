"""A served swarm whose input guardrail trips on "refund": what a client sees of the trip."""

from swarmgraph import Agent, ScriptedChatModel, build_swarm_graph


def no_refunds(context_variables, messages):
    return "refunds are handled by phone" if "refund" in str(messages[-1]) else None


desk = Agent(name="Desk", input_guardrails=[no_refunds])
model = ScriptedChatModel([], respond=lambda messages: "ok")
graph = build_swarm_graph([desk], chat_model=model).compile()
