"""An OpenAI Agents SDK agent whose payment tool runs only once a person approves the exact call on their phone.

    pip install agent-auth openai-agents
    AGENT_AUTH_API_KEY=aa_… OPENAI_API_KEY=sk-… python3 openai_agents_tool.py

The tool is async and waits with AsyncClient, so the event loop keeps serving other tool calls while the holder
decides. A denial raises ApprovalDeniedError inside the tool; the SDK hands the model the text that
failure_error_function returns, so the model learns the holder's reason and the payment does not happen. (The SDK's
own ``needs_approval`` pauses the run instead; the TypeScript client's OpenAI Agents integration answers those
interruptions through the service, see libs/client/README.md.)
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from agents import Agent, RunContextWrapper, Runner, function_tool

from agent_auth import ApprovalDeniedError, AsyncClient, requires_approval

client = AsyncClient(
    os.environ["AGENT_AUTH_API_KEY"], os.environ.get("AGENT_AUTH_BASE_URL", "http://127.0.0.1:8080/api/v1")
)


def tell_the_model(context: RunContextWrapper[Any], error: Exception) -> str:
    if isinstance(error, ApprovalDeniedError):
        return f"{error}. The payment was not made."
    return f"The payment tool failed: {error}"


# requires_approval goes under @function_tool: the SDK reads the original signature and docstring through it.
@function_tool(failure_error_function=tell_the_model)
@requires_approval(
    client,
    action_type="purchase",
    title="Pay {merchant} {amount:.2f} {currency}",
    describe=lambda args: {"amount": args["amount"], "currency": args["currency"], "recipient": args["merchant"]},
    reversible=False,
    timeout=600,
)
async def pay(merchant: str, amount: float, currency: str) -> str:
    """Pay a merchant.

    Args:
        merchant: who is paid.
        amount: how much, in major units (12.50).
        currency: ISO 4217 code, e.g. USD.
    """
    # ... your payment provider here; this line runs only after the approval ...
    return f"Paid {amount:.2f} {currency} to {merchant}."


agent = Agent(
    name="Shopping assistant",
    instructions="Buy what the user asks for with the pay tool. If a payment is not approved, say so and stop.",
    tools=[pay],
)


async def main() -> None:
    result = await Runner.run(agent, "Buy the three paperbacks in my Acme Books cart, 42.50 USD.")
    print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
