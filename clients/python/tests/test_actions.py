"""Client against the real service: request, read, held wait released by the device, deny, cancel, time-out, and
the polling fallback for a service that refuses held reads."""

from __future__ import annotations

import time
import unittest

import support
from agent_auth import Client, ConflictError, NotFoundError, WaitTimeoutError


class ActionsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.base_url, api_key, device_id = support.service()
        cls.client = Client(api_key, cls.base_url + "/")
        cls.device = support.Device(cls.base_url, device_id)
        cls.api_key = api_key

    def test_request_action_sends_every_creation_field_and_reads_the_status(self) -> None:
        created = self.client.request_action(
            "purchase",
            "Buy a book",
            description="Three paperbacks",
            risk_level="low",
            reversible=False,
            amount=12.5,
            currency="eur",
            recipient="books.example",
            metadata={"order": "A-1"},
            expires_in_seconds=600,
            callback_url="https://agent.example.com/hook",
        )
        self.assertTrue(created["id"].startswith("act_"))
        expected = {
            "status": "pending",
            "action_type": "purchase",
            "title": "Buy a book",
            "description": "Three paperbacks",
            "risk_level": "low",
            "reversible": False,
            "amount": 12.5,
            "amount_cents": 1250,
            "currency": "EUR",
            "recipient": "books.example",
            "metadata": {"order": "A-1"},
            "callback_url": "https://agent.example.com/hook",
            "receipt": None,
        }
        self.assertEqual({key: created[key] for key in expected}, expected)  # type: ignore[literal-required]
        read = self.client.get_status(created["id"])
        self.assertEqual((read["id"], read["status"], read["resolved_by"]), (created["id"], "pending", None))

    def test_wait_for_result_is_one_held_read_that_the_device_approval_releases(self) -> None:
        proxy = support.Proxy(self.base_url)
        try:
            counting = Client(self.api_key, proxy.base_url)
            created = counting.request_action("data_access", "Read the CRM")
            approving = self.device.decide_later(support.is_for(created["id"]), "approve", delay=0.5)
            started = time.monotonic()
            # A poller with a 30 s interval would take 30 s: the held read answers as the holder decides.
            done = counting.wait_for_result(created["id"], timeout=40, poll_interval=30)
            elapsed = time.monotonic() - started
            approving.result()
        finally:
            proxy.close()
        self.assertEqual((done["status"], done["resolved_by"]), ("approved", "biometric"))
        self.assertLess(elapsed, 10)
        reads = [path for path in proxy.paths() if path.startswith("GET ")]
        self.assertEqual(reads[0], f"GET /api/v1/actions/{created['id']}")
        self.assertRegex(reads[1], rf"^GET /api/v1/actions/{created['id']}\?wait=(3\d|40)$")
        self.assertEqual(len(reads), 2)

    def test_wait_for_result_returns_a_denial_with_its_reason(self) -> None:
        created = self.client.request_action("social", "Post a tweet")
        self.device.decide_later(support.is_for(created["id"]), "deny", reason="not today")
        done = self.client.wait_for_result(created["id"], timeout=20)
        self.assertEqual((done["status"], done["resolved_by"], done["reason"]), ("denied", "user", "not today"))

    def test_request_and_wait_asks_and_returns_the_outcome(self) -> None:
        approving = self.device.decide_later(support.titled("Restart the staging database"), "approve")
        done = self.client.request_and_wait("system", "Restart the staging database", risk_level="high", timeout=20)
        self.assertEqual(done["status"], "approved")
        self.assertEqual(approving.result()["id"], done["id"])
        self.assertEqual(done["risk_level"], "high")

    def test_cancel_withdraws_a_pending_request_and_a_decided_one_is_a_conflict(self) -> None:
        created = self.client.request_action("legal", "Sign the NDA")
        cancelled = self.client.cancel_action(created["id"])
        self.assertEqual((cancelled["status"], cancelled["resolved_by"]), ("cancelled", "agent"))
        self.assertNotIn(created["id"], [item["id"] for item in self.device.pending()])
        self.assertEqual(self.client.cancel_action(created["id"])["status"], "cancelled")  # answered again
        self.assertEqual(self.client.wait_for_result(created["id"], timeout=5)["status"], "cancelled")

        approved = self.client.request_action("legal", "Sign the MSA")
        self.device.approve(approved["id"])
        with self.assertRaises(ConflictError) as caught:
            self.client.cancel_action(approved["id"])
        self.assertEqual((caught.exception.status, caught.exception.code), (409, "action_not_pending"))

    def test_wait_for_result_gives_up_after_its_timeout_and_the_request_stays_pending(self) -> None:
        created = self.client.request_action("scheduling", "Book a table")
        started = time.monotonic()
        with self.assertRaises(WaitTimeoutError) as caught:
            self.client.wait_for_result(created["id"], timeout=1.5, poll_interval=0.2)
        self.assertLess(time.monotonic() - started, 5)
        self.assertEqual(caught.exception.action["id"], created["id"])
        self.assertEqual(self.client.get_status(created["id"])["status"], "pending")
        with self.assertRaises(NotFoundError):
            self.client.wait_for_result("act_doesnotexist", timeout=5)

    def test_falls_back_to_polling_when_the_service_refuses_held_reads(self) -> None:
        proxy = support.Proxy(self.base_url)
        try:
            # An older service: 400 naming `wait` for a held read, as its query validation would answer.
            refusal = (400, {}, {"code": "invalid_request", "detail": "wait: Unrecognized key"})
            proxy.intervene(lambda method, path: "wait=" in path, refusal)
            polling = Client(self.api_key, proxy.base_url)
            created = polling.request_action("communication", "Send the weekly report")
            self.device.decide_later(support.is_for(created["id"]), "approve", delay=0.8)
            done = polling.wait_for_result(created["id"], timeout=20, poll_interval=0.25)
            self.assertEqual(done["status"], "approved")
            reads = [(path, at) for method, path, _, at in proxy.seen if method == "GET"]
            self.assertIn("wait=", reads[1][0])
            self.assertTrue(all("wait=" not in path for path, _ in reads[2:]))
            self.assertGreaterEqual(len(reads), 4)
            gaps = [later - earlier for (_, earlier), (_, later) in zip(reads[2:], reads[3:])]
            self.assertTrue(all(gap >= 0.2 for gap in gaps), gaps)
            # This client polls from now on.
            again = polling.request_action("communication", "Send the monthly report")
            self.device.approve(again["id"])
            before = len(proxy.seen)
            polling.wait_for_result(again["id"], timeout=5)
            self.assertTrue(all("wait=" not in path for _, path, _, _ in proxy.seen[before:]))
        finally:
            proxy.close()


if __name__ == "__main__":
    unittest.main()
