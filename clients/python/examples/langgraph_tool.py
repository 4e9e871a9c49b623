"""A LangGraph agent whose email tool runs only once a person approves the exact call on their phone.

    pip install agent-auth langgraph langchain-openai
    AGENT_AUTH_API_KEY=aa_… OPENAI_API_KEY=sk-… python3 langgraph_tool.py

The tool blocks while the holder decides (held reads, answered the moment they tap Approve or Deny). A denial
reaches the model as the tool's error message, with the holder's reason, and the email is not sent. To pause the
graph instead of a running tool (a checkpointer and a resume from the service's webhook), see the TypeScript
client's LangGraph integration in libs/client/README.md for the pattern.
"""

from __future__ import annotations

import os
from typing import Any, Dict

from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from agent_auth import ApprovalDeniedError, Client, requires_approval

client = Client(os.environ["AGENT_AUTH_API_KEY"], os.environ.get("AGENT_AUTH_BASE_URL", "http://127.0.0.1:8080/api/v1"))


# requires_approval goes under @tool: LangChain reads the original signature and docstring through it.
@tool
@requires_approval(client, action_type="communication", title="Email {to}: {subject}", risk_level="high", timeout=600)
def send_email(to: str, subject: str, body: str) -> str:
    """Send an email to one recipient."""
    # ... your mailer here; this line runs only after the approval ...
    return f"Email to {to} sent."


def explain_denial(error: ApprovalDeniedError) -> str:
    """What the model reads when the holder said no (ToolNode handles only the exception types this names)."""
    return f"{error}. The email was not sent; do not try again unless the user asks."


tools = [send_email]
model = ChatOpenAI(model="gpt-4.1-mini").bind_tools(tools)


def call_model(state: MessagesState) -> Dict[str, Any]:
    return {"messages": [model.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("model", call_model)
builder.add_node("tools", ToolNode(tools, handle_tool_errors=explain_denial))
builder.add_edge(START, "model")
builder.add_conditional_edges("model", tools_condition)
builder.add_edge("tools", "model")
graph = builder.compile()

if __name__ == "__main__":
    request = "Email board@example.com with the subject 'Q3 report': revenue grew 12 % over Q2."
    result = graph.invoke({"messages": [HumanMessage(request)]})
    print(result["messages"][-1].content)
