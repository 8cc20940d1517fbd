"""A LangGraph-native agent (langchain's create_agent) as a member of a swarm of our Agents."""
