"""Every error class from a real error answer of the service, and the retries: 429 honouring Retry-After (the
service's own rate limit, and a proxy answering in its place), transient failures, a connection lost after a create
arrived (the Idempotency-Key makes the retry the same request), and the same key sent twice."""

from __future__ import annotations

import socket
import time
import unittest
import uuid
from concurrent.futures import ThreadPoolExecutor

import support
from agent_auth import (
    AgentAuthError,
    Client,
    ForbiddenError,
    NotFoundError,
    QuotaExceededError,
    RateLimitedError,
    ServiceUnreachableError,
    UnauthorizedError,
    ValidationError,
)


class ErrorsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.base_url, cls.api_key, device_id = support.service()
        cls.client = Client(cls.api_key, cls.base_url)
        cls.device = support.Device(cls.base_url, device_id)

    def test_400_is_a_validation_error_naming_the_field(self) -> None:
        with self.assertRaises(ValidationError) as caught:
            self.client.request_action("purchase", "x", amount=-1)
        err = caught.exception
        self.assertIsInstance(err, AgentAuthError)
        self.assertEqual((err.status, err.code), (400, "invalid_request"))
        self.assertRegex(err.detail, r"^amount: must be positive")
        self.assertEqual(err.body, {"code": "invalid_request", "detail": err.detail})
        with self.assertRaises(ValidationError) as bad_type:
            self.client.request_action("teleport", "x")  # type: ignore[arg-type]
        self.assertRegex(bad_type.exception.detail, r"^action_type: ")
        with self.assertRaises(ValidationError):
            self.client.get_history(0)
        with self.assertRaises(ValidationError) as bad_cursor:
            self.client.get_history(cursor="not-a-cursor")
        self.assertEqual(bad_cursor.exception.code, "invalid_cursor")

    def test_401_is_an_unauthorized_error(self) -> None:
        stranger = Client("aa_abcdefghijkl_abcdefghijklmnopqrstuvwxyzABCDEF", self.base_url)
        with self.assertRaises(UnauthorizedError) as caught:
            stranger.get_history()
        self.assertEqual((caught.exception.status, caught.exception.code), (401, "api_key_invalid"))
        self.assertEqual(caught.exception.detail, "Invalid API key")

    def test_402_is_a_quota_exceeded_error_once_the_free_plan_is_used_up(self) -> None:
        account = support.new_account(self.base_url, unlimited=False)
        device = support.Device(self.base_url, account["device_id"])
        quota = device.ok("GET", "/account")["monthly_quota"]
        if quota is None or quota > 50:
            self.skipTest(f"the free plan's quota is {quota} here; the test stack sets FREE_PLAN_MONTHLY_ACTIONS low")
        client = Client(account["api_key"], self.base_url)
        for n in range(quota):
            client.request_action("system", f"within the quota {n}")
        with self.assertRaises(QuotaExceededError) as caught:
            client.request_action("system", "one too many")
        self.assertEqual((caught.exception.status, caught.exception.code), (402, "quota_exceeded"))
        self.assertIn("unlimited", caught.exception.detail)

    def test_403_404_409_from_the_service(self) -> None:
        unapproved = self.client.request_api_call("nothing-stored", "GET", "https://api.example.com/x")
        with self.assertRaises(ForbiddenError) as forbidden:
            self.client.execute_approved(unapproved["id"])
        self.assertEqual((forbidden.exception.status, forbidden.exception.code), (403, "action_not_approved"))

        with self.assertRaises(NotFoundError) as missing:
            self.client.get_status("act_doesnotexist")
        self.assertEqual((missing.exception.status, missing.exception.code), (404, "action_not_found"))
        self.assertEqual(missing.exception.detail, "Action request 'act_doesnotexist' not found")

    def test_an_unreachable_service_is_a_service_unreachable_error_after_the_retries(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        closed = Client(self.api_key, f"http://127.0.0.1:{port}/api/v1", max_retries=2)
        started = time.monotonic()
        with self.assertRaises(ServiceUnreachableError):
            closed.get_status("act_x")
        self.assertGreater(time.monotonic() - started, 0.3)  # two backoffs of at least 125 and 250 ms
        with self.assertRaises(ConnectionError):
            closed.cancel_action("act_x")


class RetriesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.base_url, cls.api_key, device_id = support.service()
        cls.device = support.Device(cls.base_url, device_id)

    def setUp(self) -> None:
        self.proxy = support.Proxy(self.base_url)
        self.addCleanup(self.proxy.close)

    def test_the_same_idempotency_key_twice_makes_one_request(self) -> None:
        account = support.new_account(self.base_url)
        client = Client(account["api_key"], self.base_url)
        key = f"order-{uuid.uuid4()}"
        first = client.request_action("purchase", "Buy once", amount=5, idempotency_key=key)
        second = client.request_action("purchase", "Buy once", amount=5, idempotency_key=key)
        self.assertEqual(second["id"], first["id"])
        self.assertEqual([a["id"] for a in client.get_history()["actions"]], [first["id"]])
        with self.assertRaises(AgentAuthError) as reused:
            client.request_action("purchase", "Buy something else", amount=5, idempotency_key=key)
        self.assertEqual((reused.exception.status, reused.exception.code), (422, "idempotency_key_reused"))

    def test_a_create_whose_answer_was_lost_is_retried_with_its_key_and_made_once(self) -> None:
        account = support.new_account(self.base_url)
        client = Client(account["api_key"], self.proxy.base_url)
        self.proxy.intervene(lambda method, path: method == "POST", "forward-then-drop")
        created = client.request_action("communication", "Email the board once")
        posts = [headers for method, _, headers, _ in self.proxy.seen if method == "POST"]
        self.assertEqual(len(posts), 2)
        keys = {h.get("idempotency-key") for h in posts}
        self.assertEqual(len(keys), 1)
        direct = Client(account["api_key"], self.base_url)
        self.assertEqual([a["id"] for a in direct.get_history()["actions"]], [created["id"]])

    def test_a_vault_execution_is_never_retried_after_a_lost_connection(self) -> None:
        client = Client(self.api_key, self.proxy.base_url)
        self.proxy.intervene(lambda method, path: "/vault/execute/" in path, "drop")
        with self.assertRaises(ServiceUnreachableError):
            client.execute_approved("act_whatever")
        self.assertEqual(len([p for p in self.proxy.paths() if "/vault/execute/" in p]), 1)

    def test_503_and_504_on_a_read_are_retried_with_backoff(self) -> None:
        client = Client(self.api_key, self.proxy.base_url)
        self.proxy.intervene(lambda m, p: m == "GET", (503, {}, {"code": "service_unavailable", "detail": "down"}))
        self.proxy.intervene(lambda m, p: m == "GET", (504, {}, {"code": "service_timeout", "detail": "slow"}))
        page = client.get_history(1)
        self.assertIn("next_cursor", page)
        self.assertEqual(len(self.proxy.seen), 3)

    def test_a_429_is_retried_after_the_retry_after_it_names(self) -> None:
        client = Client(self.api_key, self.proxy.base_url)
        limited = (429, {"retry-after": "1"}, {"code": "rate_limited", "detail": "Rate limit exceeded; retry in 1 s"})
        self.proxy.intervene(lambda m, p: m == "POST", limited)
        created = client.request_action("system", "After a 429")
        self.assertEqual(created["status"], "pending")
        posts = [(headers, at) for method, _, headers, at in self.proxy.seen if method == "POST"]
        self.assertEqual(len(posts), 2)
        self.assertGreaterEqual(posts[1][1] - posts[0][1], 0.95)
        self.assertEqual(posts[0][0]["idempotency-key"], posts[1][0]["idempotency-key"])

    def test_the_services_own_rate_limit_is_waited_out(self) -> None:
        account = support.new_account(self.base_url)
        headers = {"x-api-key": account["api_key"]}
        status, first, _ = support.call(self.base_url, "GET", "/actions?limit=1", headers=headers)
        self.assertEqual(status, 200)
        limit = int(first["x-ratelimit-limit"])
        if limit > 200:
            self.skipTest(f"the agent rate limit is {limit} here; the test stack sets RATE_LIMIT_AGENT low")

        def use_up_the_window() -> int:
            """Sends requests with the key, several at a time, until the service answers 429; its Retry-After."""
            deadline = time.monotonic() + 20
            with ThreadPoolExecutor(8) as pool:
                while time.monotonic() < deadline:
                    answers = list(pool.map(lambda _: support.call(self.base_url, "GET", "/actions?limit=1", headers=headers), range(limit)))
                    refused = [(h, body) for status, h, body in answers if status == 429]
                    if refused:
                        self.assertEqual(refused[-1][1]["code"], "rate_limited")
                        return int(refused[-1][0]["retry-after"])
            raise AssertionError("the service never answered 429")

        if use_up_the_window() > 5:
            self.skipTest("Retry-After is long here; the test stack sets a short RATE_LIMIT_WINDOW_SECONDS")
        # The window may free up between the burst and the client's call on a loaded machine: try a few rounds.
        impatient = Client(account["api_key"], self.base_url, max_retries=0)
        for _ in range(5):
            use_up_the_window()
            try:
                impatient.get_history(1)
            except RateLimitedError as err:
                self.assertEqual((err.status, err.code), (429, "rate_limited"))
                self.assertGreaterEqual(err.retry_after_seconds or 0, 1)
                break
        else:
            self.fail("the client never met the 429")

        # Through the proxy, which passes the service's answers on and notes them: after a 429 the client waits
        # the Retry-After it names, then gets the answer.
        patient = Client(account["api_key"], self.proxy.base_url)
        for _ in range(5):
            use_up_the_window()
            before = len(self.proxy.answers)
            page = patient.get_history(1)
            answers = self.proxy.answers[before:]
            if answers[0][0] == 429:
                self.assertEqual(page["actions"], [])
                self.assertEqual(answers[-1][0], 200)
                for (status, retry_after, at), (_, _, next_at) in zip(answers, answers[1:]):
                    self.assertEqual(status, 429)
                    self.assertGreaterEqual(next_at - at, int(retry_after or 0) - 0.1)
                break
        else:
            self.fail("the client never met the 429 through the proxy")

if __name__ == "__main__":
    unittest.main()
