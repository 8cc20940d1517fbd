"""OpenAI Swarm's own examples, restated as offline tests on our engine."""

from __future__ import annotations

from swarmgraph.graph import Agent, Result, Swarm
from swarmgraph.graph.chat_models.scripted import ScriptedChatModel, scripted_tool_call


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def test_bare_minimum_returns_only_new_messages_with_sender():
    agent = Agent(name="Agent", instructions="You are a helpful agent.")
    model = ScriptedChatModel(["Hello! How can I help?"])
    history = [user("Hi!")]
    response = Swarm(chat_model=model).run(agent=agent, messages=history)
    assert response.messages == [
        {
            "content": "Hello! How can I help?",
            "refusal": None,
            "role": "assistant",
            "audio": None,
            "function_call": None,
            "tool_calls": None,
            "sender": "Agent",
        }
    ]
    assert response.agent is agent
    assert history == [user("Hi!")]  # the caller's list is untouched
    sent = model.calls[0]
    assert sent[0].type == "system" and sent[0].content == "You are a helpful agent."
    assert sent[1].content == "Hi!"


def test_function_calling_weather():
    calls = []

    def get_weather(location) -> str:
        calls.append(location)
        return "{'temp':67, 'unit':'F'}"

    agent = Agent(name="Agent", functions=[get_weather])
    model = ScriptedChatModel(
        [scripted_tool_call("get_weather", {"location": "NYC"}), "It's 67F in NYC."]
    )
    response = Swarm(chat_model=model).run(agent=agent, messages=[user("Weather in NYC?")])
    assert calls == ["NYC"]
    assert [m["role"] for m in response.messages] == ["assistant", "tool", "assistant"]
    tool_msg = response.messages[1]
    assert tool_msg == {
        "role": "tool",
        "tool_call_id": response.messages[0]["tool_calls"][0]["id"],
        "tool_name": "get_weather",
        "content": "{'temp':67, 'unit':'F'}",
    }
    assert response.messages[0]["tool_calls"][0]["function"] == {
        "name": "get_weather",
        "arguments": '{"location": "NYC"}',
    }
    # The second model call saw the tool's answer.
    assert model.calls[1][-1].content == "{'temp':67, 'unit':'F'}"


def test_context_variables_reach_instructions_and_tools_but_not_the_model():
    seen = {}

    def instructions(context_variables):
        return f"You are a helpful agent. Greet the user by name ({context_variables['name']})."

    def print_account_details(context_variables: dict):
        seen.update(context_variables)
        return "Success"

    agent = Agent(name="Agent", instructions=instructions, functions=[print_account_details])
    model = ScriptedChatModel([scripted_tool_call("print_account_details"), "Done, James."])
    ctx = {"name": "James", "user_id": 123}
    response = Swarm(chat_model=model).run(
        agent=agent, messages=[user("Hi!")], context_variables=ctx
    )
    assert seen == {"name": "James", "user_id": 123}
    assert model.calls[0][0].content.endswith("(James).")
    tool_schema = model.bound_tools[0][0]["function"]
    assert "context_variables" not in tool_schema["parameters"]["properties"]
    assert response.context_variables == ctx and response.context_variables is not ctx


def test_missing_context_keys_read_as_empty_like_swarm():
    agent = Agent(instructions=lambda ctx: f"Hello [{ctx['name']}]")
    model = ScriptedChatModel(["ok"])
    Swarm(chat_model=model).run(agent=agent, messages=[user("x")])
    assert model.calls[0][0].content == "Hello []"


def test_agent_handoff_switches_agent_and_model():
    spanish = Agent(name="Spanish Agent", model="gpt-es", instructions="Solo hablas español.")

    def transfer_to_spanish_agent():
        """Transfer spanish speaking users immediately."""
        return spanish

    english = Agent(name="English Agent", functions=[transfer_to_spanish_agent])
    models = {
        "gpt-4o": ScriptedChatModel([scripted_tool_call("transfer_to_spanish_agent")]),
        "gpt-es": ScriptedChatModel(["¡Hola! ¿Cómo estás?"]),
    }
    swarm = Swarm(chat_model=lambda name: models[name])
    response = swarm.run(agent=english, messages=[user("Hola. ¿Como estás?")])
    assert response.agent is spanish
    assert response.messages[1]["content"] == '{"assistant": "Spanish Agent"}'
    assert response.messages[-1]["sender"] == "Spanish Agent"
    assert response.messages[-1]["content"] == "¡Hola! ¿Cómo estás?"
    # The model changed only because the agent changed.
    assert len(models["gpt-4o"].calls) == 1 and len(models["gpt-es"].calls) == 1
    assert models["gpt-es"].calls[0][0].content == "Solo hablas español."


def test_result_writes_context_and_hands_off():
    refunds = Agent(name="Refunds")

    def remember_order(order_id: int, context_variables: dict):
        return Result(
            value=f"order {order_id}", agent=refunds, context_variables={"order_id": order_id}
        )

    triage = Agent(name="Triage", functions=[remember_order])
    model = ScriptedChatModel([scripted_tool_call("remember_order", {"order_id": 7}), "Refunded."])
    ctx = {"name": "Ming"}
    response = Swarm(chat_model=model).run(
        agent=triage, messages=[user("refund 7")], context_variables=ctx
    )
    assert response.context_variables == {"name": "Ming", "order_id": 7}
    assert ctx == {"name": "Ming"}  # never mutated
    assert response.agent is refunds
