"""``python -m examples.langgraph_member [--offline] [--model NAME] [--chat]``"""

from .._support import choose_swarm, main_parser, play
from .agents import MODEL, build
from .offline import rules

SCRIPT = ("Do you have any books about bees?", "And when are you open?")

if __name__ == "__main__":
    args = main_parser("Library help desk: our Triage + a create_agent catalogue").parse_args()
    swarm, label = choose_swarm(rules, offline=args.offline)
    if label.startswith("real"):
        from swarmgraph.graph.models import (
            resolve_chat_model,  # OPENAI_API_KEY / OPENAI_BASE_URL
        )

        member_model = resolve_chat_model(args.model or MODEL)
    else:
        from swarmgraph import ScriptedChatModel

        member_model = ScriptedChatModel([], respond=rules)
    triage, _ = build(member_model)
    print(f"model: {args.model or label}\n")
    if args.chat:
        from swarmgraph import run_demo_loop

        run_demo_loop(triage, stream=True, swarm=swarm)
    else:
        play(swarm, triage, SCRIPT, model_override=args.model)
