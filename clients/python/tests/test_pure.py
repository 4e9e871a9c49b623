"""The client's pure parts: canonical JSON (checked against Node's own number formatting where Node is present),
Retry-After, the retry and wait plans, titles, and the error mapping. No service needed."""

from __future__ import annotations

import json
import shutil
import subprocess
import unittest

import support  # noqa: F401  (puts this checkout's src on the path)
from agent_auth import _calls as calls
from agent_auth import canonical_json, tool_call_title
from agent_auth.errors import (
    AgentAuthError,
    ConflictError,
    QuotaExceededError,
    RateLimitedError,
    UpstreamError,
    error_for,
    parse_retry_after,
)

NUMBERS = [0.0, -0.0, 1.0, 12.5, -0.5, 0.001, 1e-6, 1e-7, 1.5e-7, 1 / 3, 100.0, 1e16, 1e20, 1e21, 1e22, 5e-324,
           1.7976931348623157e308, 123456789012345680000.0, 2**53 - 1, 2**60, 4.35, 0.1 + 0.2]


class CanonicalJsonTest(unittest.TestCase):
    def test_objects_are_sorted_by_utf16_code_units_without_spaces(self) -> None:
        value = {"b": [1, True, None], "a": {"z": "é\n\u2028", "\U0001f600": 1, "\uff61": 2}, "": False}
        self.assertEqual(
            canonical_json(value),
            '{"":false,"a":{"z":"é\\n\u2028","\U0001f600":1,"\uff61":2},"b":[1,true,null]}',
        )

    def test_numbers_are_written_as_ecmascript_writes_them(self) -> None:
        expected = {
            0.0: "0", -0.0: "0", 1.0: "1", 0.001: "0.001", 1e-6: "0.000001", 1e-7: "1e-7", 1e21: "1e+21",
            1e20: "100000000000000000000", 2**60: "1152921504606847000",
        }
        for value, text in expected.items():
            self.assertEqual(canonical_json(value), text)
        with self.assertRaises(ValueError):
            canonical_json(float("nan"))

    @unittest.skipUnless(shutil.which("node"), "node is not installed")
    def test_numbers_match_node(self) -> None:
        script = f"console.log(JSON.stringify({json.dumps(NUMBERS)}.map(String)))"
        from_node = json.loads(subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True).stdout)
        self.assertEqual([canonical_json(n) for n in NUMBERS], from_node)


class RetryAfterTest(unittest.TestCase):
    def test_seconds_and_http_dates(self) -> None:
        self.assertEqual(parse_retry_after("17"), 17)
        self.assertEqual(parse_retry_after(" 0 "), 0)
        self.assertIsNone(parse_retry_after(None))
        self.assertIsNone(parse_retry_after("-3"))
        self.assertIsNone(parse_retry_after("soon"))
        now = 1_700_000_000.0
        self.assertEqual(parse_retry_after("Tue, 14 Nov 2023 22:13:40 GMT", now=now), 20)
        self.assertEqual(parse_retry_after("Tue, 14 Nov 2023 22:00:00 GMT", now=now), 0)


class RetryBudgetTest(unittest.TestCase):
    def test_a_create_retries_transient_failures_and_429s_up_to_the_budget(self) -> None:
        budget = calls.RetryBudget(calls.create_action({"title": "x"}), max_retries=2, max_retry_delay=10)
        self.assertIsNotNone(budget.after_status(503, None))
        self.assertIsNotNone(budget.after_network_error())
        self.assertIsNone(budget.after_status(504, None))
        self.assertEqual(budget.after_status(429, "3"), 3)
        self.assertEqual(budget.after_status(429, "3600"), 10)  # capped by max_retry_delay
        self.assertIsNone(budget.after_status(429, "1"))

    def test_a_vault_execution_is_retried_only_on_429(self) -> None:
        budget = calls.RetryBudget(calls.execute_approved("act_1"), max_retries=3, max_retry_delay=60)
        self.assertIsNone(budget.after_network_error())
        self.assertIsNone(budget.after_status(502, None))
        self.assertEqual(budget.after_status(429, None), 1)  # no Retry-After: 1 s, then doubling
        self.assertEqual(budget.after_status(429, None), 2)
        self.assertIsNone(budget.after_status(400, None))

    def test_backoff_doubles_with_jitter(self) -> None:
        for n in range(4):
            delay = calls.transient_delay(n)
            self.assertGreaterEqual(delay, 0.125 * 2**n)
            self.assertLessEqual(delay, 0.375 * 2**n)


class WaitPlanTest(unittest.TestCase):
    def test_holds_never_past_the_deadline(self) -> None:
        clock = [100.0]
        plan = calls.WaitPlan(timeout=75, hold_seconds=50, poll_interval=2, clock=lambda: clock[0])
        self.assertEqual(plan.hold_for(True), 50)
        self.assertEqual(plan.hold_for(False), 0)
        clock[0] = 150.5
        self.assertEqual(plan.hold_for(True), 24)
        clock[0] = 174.5
        self.assertEqual((plan.hold_for(True), plan.pause()), (0, 0.5))
        self.assertEqual(calls.WaitPlan(None, 500, 2).hold_for(True), 60)
        self.assertEqual(calls.WaitPlan(None, 0, 2).hold_for(True), 1)

    def test_a_service_that_ignores_wait_is_noticed(self) -> None:
        clock = [0.0]
        plan = calls.WaitPlan(None, 50, 2, clock=lambda: clock[0])
        clock[0] = 1.0
        self.assertTrue(plan.answered_at_once({"status": "pending"}, 0.0, 50))
        self.assertFalse(plan.answered_at_once({"status": "approved"}, 0.0, 50))
        clock[0] = 50.0
        self.assertFalse(plan.answered_at_once({"status": "pending"}, 0.0, 50))


class CallsTest(unittest.TestCase):
    def test_what_each_operation_sends(self) -> None:
        create = calls.create_action({"action_type": "system", "title": "x", "amount": None})
        self.assertEqual((create.method, create.path, create.body), ("POST", "/actions", {"action_type": "system", "title": "x"}))
        self.assertRegex(create.headers["Idempotency-Key"], r"^[0-9a-f-]{36}$")
        self.assertEqual(calls.create_action({}, "mine").headers["Idempotency-Key"], "mine")
        self.assertEqual(calls.get_action("act/1", wait=50).path, "/actions/act%2F1?wait=50")
        self.assertEqual(
            calls.list_actions(10, "denied", None, "c u").path, "/actions?limit=10&status=denied&cursor=c+u"
        )
        self.assertEqual(calls.jwks("https://auth.example.com/api/v1").url, "https://auth.example.com/.well-known/jwks.json")
        self.assertEqual(calls.jwks("https://x.example/aa/api/v1").url, "https://x.example/aa/.well-known/jwks.json")

    def test_titles(self) -> None:
        self.assertEqual(tool_call_title("send", {"to": "ann", "n": 2}), 'send(to: "ann", n: 2)')
        long = tool_call_title("t", {"text": "x" * 500})
        self.assertEqual((len(long), long[-1]), (200, "\u2026"))
        pay = calls.payment_fields(amount=1.005, merchant="M", description=None, currency=None, metadata=None,
                                   expires_in_seconds=None, callback_url=None)
        self.assertEqual(pay["title"], "Pay M 1.00 USD")  # as JavaScript's toFixed(2) writes 1.005


class ErrorForTest(unittest.TestCase):
    def test_one_class_per_status_with_code_and_detail(self) -> None:
        err = error_for(409, {"code": "action_not_pending", "detail": "Action request is 'denied', not pending"}, None)
        self.assertIsInstance(err, ConflictError)
        self.assertEqual((err.status, err.code, str(err)), (409, "action_not_pending", "409 action_not_pending: Action request is 'denied', not pending"))
        self.assertIsInstance(error_for(402, {"code": "quota_exceeded", "detail": "q"}, None), QuotaExceededError)
        self.assertIsInstance(error_for(502, "<html>Bad gateway</html>", None), UpstreamError)
        limited = error_for(429, {"code": "rate_limited", "detail": "slow"}, "7")
        assert isinstance(limited, RateLimitedError)
        self.assertEqual(limited.retry_after_seconds, 7)
        other = error_for(418, None, None)
        self.assertEqual((type(other), other.code, other.detail), (AgentAuthError, None, "HTTP 418"))


if __name__ == "__main__":
    unittest.main()
