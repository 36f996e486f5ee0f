"""LangGraph graphs (planner, executor, replanner) and the networkx task DAG."""
