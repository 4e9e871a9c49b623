"""requires_approval against the real service: an approved call runs with its arguments (which the request's
metadata carries), a denied one raises with the holder's reason and never runs, an abandoned wait withdraws its
request; plain and async functions, with either client."""

from __future__ import annotations

import asyncio
import unittest
from dataclasses import dataclass
from typing import Any, Dict, List

import support
from agent_auth import ApprovalDeniedError, AsyncClient, Client, WaitTimeoutError, requires_approval


@dataclass
class Attachment:
    name: str
    size: int


def tool_named(name: str) -> Any:
    return lambda item: item["metadata"].get("tool") == name


class DecoratorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.base_url, _, _ = support.service()
        account = support.new_account(cls.base_url)
        cls.api_key = account["api_key"]
        cls.client = Client(cls.api_key, cls.base_url)
        cls.device = support.Device(cls.base_url, account["device_id"])

    def test_an_approved_call_runs_with_its_arguments_which_the_request_carries(self) -> None:
        sent: List[Dict[str, Any]] = []

        @requires_approval(self.client, action_type="communication", title="Email {to}: {subject}", risk_level="high")
        def send_email(to: str, subject: str, attachment: Attachment, cc: str = "") -> str:
            """Send an email."""
            sent.append({"to": to, "subject": subject, "attachment": attachment, "cc": cc})
            return f"sent to {to}"

        self.assertEqual((send_email.__name__, send_email.__doc__), ("send_email", "Send an email."))
        approving = self.device.decide_later(tool_named("send_email"), "approve")
        outcome = send_email("ann@example.com", subject="Q3", attachment=Attachment("q3.pdf", 12))
        self.assertEqual(outcome, "sent to ann@example.com")
        self.assertEqual(sent, [{"to": "ann@example.com", "subject": "Q3", "attachment": Attachment("q3.pdf", 12), "cc": ""}])
        approved = approving.result()
        self.assertEqual(approved["title"], "Email ann@example.com: Q3")
        self.assertEqual((approved["action_type"], approved["risk_level"]), ("communication", "high"))
        self.assertEqual(
            approved["metadata"],
            {
                "framework": "python",
                "tool": "send_email",
                "arguments": {"to": "ann@example.com", "subject": "Q3", "attachment": {"name": "q3.pdf", "size": 12}, "cc": ""},
            },
        )

    def test_a_denied_call_raises_with_the_reason_and_does_not_run(self) -> None:
        ran: List[int] = []

        @requires_approval(self.client, action_type="purchase", describe=lambda a: {"amount": a["amount"], "recipient": a["shop"]})
        def buy(shop: str, amount: float) -> None:
            ran.append(1)

        self.device.decide_later(tool_named("buy"), "deny", reason="too expensive")
        with self.assertRaises(ApprovalDeniedError) as caught:
            buy("Acme", 99.5)
        self.assertEqual(ran, [])
        err = caught.exception
        self.assertEqual((err.status, err.reason), ("denied", "too expensive"))
        self.assertEqual(str(err), "Denied by the approver: too expensive")
        self.assertEqual(err.action["title"], 'buy(shop: "Acme", amount: 99.5)')
        self.assertEqual((err.action["amount"], err.action["recipient"]), (99.5, "Acme"))

    def test_arguments_that_do_not_fit_the_signature_ask_nobody(self) -> None:
        @requires_approval(self.client)
        def restart(service: str) -> None:
            pass

        before = self.client.get_history(200)["actions"]
        with self.assertRaises(TypeError):
            restart("db", "extra")  # type: ignore[call-arg]
        self.assertEqual(self.client.get_history(200)["actions"], before)

    def test_a_wait_that_times_out_withdraws_its_request(self) -> None:
        @requires_approval(self.client, timeout=1, poll_interval=0.2)
        def drop_table(name: str) -> None:
            raise AssertionError("must not run")

        with self.assertRaises(WaitTimeoutError) as caught:
            drop_table("users")
        self.assertEqual(self.client.get_status(caught.exception.action["id"])["status"], "cancelled")

    def test_a_plain_function_needs_the_blocking_client(self) -> None:
        with self.assertRaises(TypeError):
            requires_approval(AsyncClient(self.api_key, self.base_url))(lambda: None)

    def test_async_functions_with_either_client(self) -> None:
        calls: List[str] = []
        async_client = AsyncClient(self.api_key, self.base_url)

        @requires_approval(async_client, title=lambda a: f"Deploy {a['version']}")
        async def deploy(version: str) -> str:
            calls.append(version)
            return f"deployed {version}"

        @requires_approval(self.client)
        async def rollback(version: str) -> str:
            calls.append(f"rollback {version}")
            return "rolled back"

        async def scenario() -> None:
            self.device.decide_later(support.titled("Deploy 1.2.3"), "approve")
            self.assertEqual(await deploy("1.2.3"), "deployed 1.2.3")
            self.device.decide_later(tool_named("rollback"), "approve")
            self.assertEqual(await rollback("1.2.2"), "rolled back")
            self.device.decide_later(support.titled("Deploy 2.0.0"), "deny", reason="freeze")
            with self.assertRaises(ApprovalDeniedError) as caught:
                await deploy("2.0.0")
            self.assertEqual(caught.exception.reason, "freeze")

            # A cancelled task withdraws its request: the holder no longer sees it.
            task = asyncio.ensure_future(deploy("3.0.0"))
            await asyncio.sleep(1)
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            [withdrawn] = [a for a in self.client.get_history(5)["actions"] if a["title"] == "Deploy 3.0.0"]
            self.assertEqual(withdrawn["status"], "cancelled")

        asyncio.run(scenario())
        self.assertEqual(calls, ["1.2.3", "rollback 1.2.2"])


if __name__ == "__main__":
    unittest.main()
