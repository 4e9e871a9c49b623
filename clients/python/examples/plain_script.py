"""An agent in a plain Python script that asks before it acts.

With ``npm start`` running (it creates a demo account in .data/demo-account.json), from the repository root:

    PYTHONPATH=clients/python/src python3 clients/python/examples/plain_script.py

or with your own agent: ``AGENT_AUTH_API_KEY=aa_… AGENT_AUTH_BASE_URL=https://…/api/v1 python3 plain_script.py``.
Approve or deny on the device app (http://localhost:8080/app/, sign in with the device id) while it waits.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent_auth import (
    ApprovalDeniedError,
    Client,
    MissingDependencyError,
    VerificationError,
    WaitTimeoutError,
    request_hash_of,
    requires_approval,
    verify_receipt,
)


def agent_key() -> str:
    if os.environ.get("AGENT_AUTH_API_KEY"):
        return os.environ["AGENT_AUTH_API_KEY"]
    demo = Path(".data/demo-account.json")
    return str(json.loads(demo.read_text())["api_key"])


client = Client(agent_key(), os.environ.get("AGENT_AUTH_BASE_URL", "http://127.0.0.1:8080/api/v1"))


@requires_approval(client, action_type="communication", title="Email {to}: {subject}", timeout=300)
def send_email(to: str, subject: str) -> str:
    """Runs only once the holder approved this exact call (its arguments are in the request's metadata)."""
    return f"(pretend) sent {subject!r} to {to}"


def buy_books() -> None:
    action = client.request_action(
        "purchase", "Buy three paperbacks", amount=42.5, recipient="Acme Books", description="For the reading list"
    )
    print(f"asked: {action['id']} is {action['status']}; approve or deny it on your phone")
    try:
        # Held reads: returns the moment the holder decides (or a rule, limit or grant already did).
        outcome = client.wait_for_result(action["id"], timeout=300)
    except WaitTimeoutError:
        client.cancel_action(action["id"])
        print("nobody answered in 5 minutes; the request is withdrawn")
        return
    reason = f" ({outcome['reason']})" if outcome["reason"] else ""
    print(f"purchase {outcome['status']} by {outcome['resolved_by']}{reason}")
    if outcome["receipt"]:
        try:
            claims = verify_receipt(outcome["receipt"], client.get_jwks())
            same = claims["request_hash"] == request_hash_of(outcome)
            print(f"receipt verified: {claims['status']} at {claims['resolved_at']}, covers this request: {same}")
        except MissingDependencyError as err:
            print(f"receipt not checked: {err}")
        except VerificationError as err:
            print(f"receipt does NOT verify: {err}")


def email_the_board() -> None:
    try:
        print(send_email("board@example.com", subject="Q3 report"))
    except ApprovalDeniedError as err:
        print(f"email not sent: {err}")


if __name__ == "__main__":
    buy_books()
    email_the_board()
