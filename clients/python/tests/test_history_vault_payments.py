"""History with its filters and cursor, the spending summary, the vault (services, request, wait, execute), and
the payment client, against the real service; vault calls reach a loopback upstream."""

from __future__ import annotations

import json
import socket
import unittest

import support
from agent_auth import Client, ConflictError, PaymentClient, UpstreamError, content_hash_of


class HistoryAndSpendingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.base_url, _, _ = support.service()

    def test_history_pages_newest_first_with_filters_and_a_cursor(self) -> None:
        account = support.new_account(self.base_url)
        client = Client(account["api_key"], self.base_url)
        device = support.Device(self.base_url, account["device_id"])
        ids = [client.request_action("system", title)["id"] for title in ["one", "two", "three", "four", "five"]]
        paid = client.request_action("purchase", "six", amount=3)["id"]
        device.approve(ids[0])
        device.approve(ids[2])

        first = client.get_history(2)
        self.assertEqual([a["title"] for a in first["actions"]], ["six", "five"])
        self.assertIsNotNone(first["next_cursor"])
        second = client.get_history(2, cursor=first["next_cursor"])
        self.assertEqual([a["title"] for a in second["actions"]], ["four", "three"])
        third = client.get_history(2, cursor=second["next_cursor"])
        self.assertEqual([a["title"] for a in third["actions"]], ["two", "one"])
        self.assertIsNone(client.get_history(2, cursor=third["next_cursor"])["next_cursor"])

        approved = client.get_history(status="approved")
        self.assertEqual([a["id"] for a in approved["actions"]], [ids[2], ids[0]])
        self.assertEqual([a["id"] for a in client.get_history(action_type="purchase")["actions"]], [paid])
        self.assertEqual(client.get_history(status="approved", action_type="purchase")["actions"], [])
        self.assertEqual([a["id"] for a in client.iter_history(page_size=4)], [paid, *reversed(ids)])
        self.assertEqual([a["id"] for a in client.iter_history(status="pending", action_type="system", page_size=1)],
                         [ids[4], ids[3], ids[1]])

    def test_spending_summary_against_a_limit(self) -> None:
        account = support.new_account(self.base_url)
        client = Client(account["api_key"], self.base_url)
        device = support.Device(self.base_url, account["device_id"])
        self.assertEqual(client.get_spending_summary(), {"agent_id": account["agent_id"], "summaries": []})
        device.ok("POST", "/spending-limits", {"period": "daily", "amount_limit": 100})
        lunch = client.request_action("purchase", "Lunch", amount=25)
        device.approve(lunch["id"])
        [entry] = client.get_spending_summary()["summaries"]
        self.assertEqual(
            {k: entry[k] for k in ("period", "limit", "spent", "remaining", "utilization")},  # type: ignore[literal-required]
            {"period": "daily", "limit": 100, "spent": 25, "remaining": 75, "utilization": 0.25},
        )
        over = client.request_action("purchase", "TV", amount=80)
        self.assertEqual(over["status"], "denied")
        self.assertEqual(over["spending_limit_exceeded"], {"period": "daily", "limit": 100, "spent": 25, "requested": 80})


class VaultTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.base_url, _, _ = support.service()
        account = support.new_account(cls.base_url)  # its own vault, whatever ran before
        cls.client = Client(account["api_key"], cls.base_url)
        cls.device = support.Device(cls.base_url, account["device_id"])
        cls.upstream = support.Upstream()
        cls.secret = "py-client-secret-0123456789"
        cls.device.ok(
            "POST",
            "/vault/credentials",
            {
                "service_name": "py-api",
                "credential_value": cls.secret,
                "allowed_hosts": ["127.0.0.1"],
                "description": "loopback test API",
            },
        )

    @classmethod
    def tearDownClass(cls) -> None:
        cls.upstream.close()

    def test_lists_the_vault_services_without_secrets(self) -> None:
        services = self.client.list_vault_services()
        self.assertIn(
            {"service_name": "py-api", "auth_type": "bearer", "allowed_hosts": ["127.0.0.1"], "description": "loopback test API"},
            services,
        )
        self.assertNotIn(self.secret, json.dumps(services))

    def test_execute_api_call_requests_waits_and_executes_with_the_credential_injected(self) -> None:
        url = f"{self.upstream.origin}/items"
        approving = self.device.decide_later(lambda item: item["metadata"].get("url") == url, "approve")
        result = self.client.execute_api_call(
            "py-api", "post", url, headers={"content-type": "application/json"}, body='{"name":"x"}', timeout=20
        )
        approving.result()
        action, response = result["action"], result["response"]
        self.assertEqual((action["status"], action["action_type"]), ("approved", "system"))
        self.assertEqual(action["title"], f"POST {url} via py-api")
        self.assertEqual(
            action["content_hash"],
            content_hash_of("py-api", "POST", url, {"content-type": "application/json"}, '{"name":"x"}'),
        )
        assert response is not None
        self.assertEqual(response["status_code"], 201)
        self.assertEqual(json.loads(response["body"]), {"got": "Bearer [redacted]", "body": '{"name":"x"}'})
        self.assertEqual(self.upstream.seen[-1]["headers"].get("authorization"), f"Bearer {self.secret}")
        self.assertNotIn(self.secret, json.dumps(result))
        with self.assertRaises(ConflictError):
            self.client.execute_approved(action["id"])

    def test_a_denied_call_is_not_executed(self) -> None:
        url = f"{self.upstream.origin}/delete-everything"
        self.device.decide_later(lambda item: item["metadata"].get("url") == url, "deny", reason="no")
        before = len(self.upstream.seen)
        result = self.client.execute_api_call("py-api", "DELETE", url, title="Delete everything", timeout=20)
        self.assertEqual((result["action"]["status"], result["action"]["reason"], result["response"]), ("denied", "no", None))
        self.assertEqual(result["action"]["title"], "Delete everything")
        self.assertEqual(len(self.upstream.seen), before)

    def test_the_lower_level_steps_and_an_upstream_that_cannot_be_reached(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        asked = self.client.request_api_call("py-api", "GET", f"http://127.0.0.1:{port}/status", risk_level="low")
        self.assertEqual((asked["status"], asked["risk_level"]), ("pending", "low"))
        self.device.approve(asked["id"], content_hash=asked["content_hash"])
        with self.assertRaises(UpstreamError) as caught:
            self.client.execute_approved(asked["id"])
        self.assertEqual(caught.exception.status, 502)
        self.assertNotIn(self.secret, caught.exception.detail)


class PaymentClientTest(unittest.TestCase):
    def test_requests_a_payment_and_waits_for_the_wallet_approval(self) -> None:
        base_url, api_key, device_id = support.service()
        payments = PaymentClient(api_key, base_url)
        device = support.Device(base_url, device_id)
        request = payments.request_payment(42, "Acme Books", description="Three paperbacks", metadata={"cart": "c-9"})
        self.assertEqual(request["title"], "Pay Acme Books 42.00 USD")
        expected = {
            "status": "pending",
            "action_type": "purchase",
            "amount": 42,
            "currency": "USD",
            "recipient": "Acme Books",
            "description": "Three paperbacks",
            "reversible": False,
            "metadata": {"cart": "c-9"},
        }
        self.assertEqual({k: request[k] for k in expected}, expected)  # type: ignore[literal-required]
        self.assertEqual(payments.get_status(request["id"])["status"], "pending")
        device.decide_later(support.is_for(request["id"]), "approve", payment_method="wallet_pay")
        done = payments.wait_for_result(request["id"], timeout=20)
        self.assertEqual((done["status"], done["resolved_by"]), ("approved", "wallet_pay"))
        euros = payments.request_payment(9.5, "Café", currency="eur")
        self.assertEqual((euros["title"], euros["currency"], euros["amount_cents"]), ("Pay Café 9.50 EUR", "EUR", 950))


if __name__ == "__main__":
    unittest.main()
