"""One step of a Session turn that waits for approval, in its own process (restart tests).

``approval_worker.py URL CONVERSATION BASE_URL start|resume|pending``

The model is the loopback OpenAI stub at ``BASE_URL``. ``start`` sends "refund order 7" and
prints the pending calls as JSON; ``pending`` prints ``session.pending`` of a fresh process;
``resume`` approves every pending call and prints the last message.
"""

from __future__ import annotations

import json
import sys

import openai
from swarmgraph.memory import Session

from swarmgraph import Agent, Result, Swarm, needs_approval


@needs_approval
def process_refund(order_id: int) -> Result:
    """Refund an order."""
    return Result(value=f"Refunded order {order_id}.", context_variables={"refunded": order_id})


def main(url: str, cid: str, base_url: str, step: str) -> None:
    refunds = Agent(name="Refunds", functions=[process_refund])
    triage = Agent(name="Triage", handoffs=[refunds])
    client = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0)
    swarm = Swarm(client=client)
    session = Session(cid, url=url)
    if step == "start":
        response = session.run(swarm, triage, "refund order 7")
        print(json.dumps([p.model_dump() for p in response.pending]))
    elif step == "pending":
        print(json.dumps([p.model_dump() for p in session.pending]))
    else:
        decisions = {p.id: True for p in session.pending}
        response = session.run(swarm, triage, approvals=decisions)
        print(json.dumps({"last": response.messages[-1]["content"], "agent": response.agent.name}))


if __name__ == "__main__":
    main(*sys.argv[1:5])
