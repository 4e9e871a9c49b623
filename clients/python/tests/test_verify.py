"""Receipt and audit-chain verification on what the real service signed, against its live key set; altered
receipts and chains are rejected; without `cryptography` the error names the extra to install."""

from __future__ import annotations

import base64
import copy
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

import support
from agent_auth import (
    Client,
    VerificationError,
    request_hash_of,
    verify_audit_chain,
    verify_receipt,
)

try:
    import cryptography  # noqa: F401

    HAS_CRYPTOGRAPHY = True
except ImportError:
    HAS_CRYPTOGRAPHY = False

SRC = str(Path(__file__).resolve().parents[1] / "src")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@unittest.skipUnless(HAS_CRYPTOGRAPHY, "cryptography is not installed (pip install agent-auth[verify])")
class VerifyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.base_url, _, _ = support.service()
        account = support.new_account(cls.base_url)
        cls.account = account
        cls.client = Client(account["api_key"], cls.base_url)
        cls.device = support.Device(cls.base_url, account["device_id"])
        cls.jwks = cls.client.get_jwks()
        created = cls.client.request_action("purchase", "Receipted book", amount=12.5, metadata={"isbn": "978-0"})
        cls.action = cls.device.approve(created["id"])

    def test_a_real_receipt_verifies_and_names_the_request(self) -> None:
        receipt = self.client.get_status(self.action["id"])["receipt"]
        assert receipt is not None
        claims = verify_receipt(receipt, self.jwks)
        self.assertEqual(claims["sub"], self.action["id"])
        self.assertEqual((claims["status"], claims["resolved_by"]), ("approved", "biometric"))
        self.assertEqual((claims["account_id"], claims["agent_id"]), (self.account["account_id"], self.account["agent_id"]))
        self.assertEqual((claims["amount_cents"], claims["currency"]), (1250, "USD"))
        self.assertEqual(claims["request_hash"], request_hash_of(self.action))
        self.assertEqual(verify_receipt(receipt, self.jwks, issuer=claims["iss"])["sub"], self.action["id"])
        with self.assertRaises(VerificationError):
            verify_receipt(receipt, self.jwks, issuer="https://someone-else.example")

    def test_altered_receipts_are_rejected(self) -> None:
        receipt = self.action["receipt"]
        assert receipt is not None
        header, payload, signature = receipt.split(".")
        claims = json.loads(unb64url(payload))
        claims["status"] = "denied"
        forged_claims = f"{header}.{b64url(json.dumps(claims).encode())}.{signature}"
        raw = bytearray(unb64url(signature))
        raw[5] ^= 1
        forged_signature = f"{header}.{payload}.{b64url(bytes(raw))}"
        other_typ = json.loads(unb64url(header))
        other_typ["typ"] = "aa-audit-head+jws"
        wrong_typ = f"{b64url(json.dumps(other_typ).encode())}.{payload}.{signature}"
        hs256 = dict(other_typ, typ="aa-receipt+jwt", alg="HS256")
        wrong_alg = f"{b64url(json.dumps(hs256).encode())}.{payload}.{signature}"
        for forged in [forged_claims, forged_signature, wrong_typ, wrong_alg, "not.a.jws", receipt[:-4]]:
            with self.subTest(forged=forged[-20:]), self.assertRaises(VerificationError):
                verify_receipt(forged, self.jwks)

    def test_a_key_set_without_the_signing_key_rejects_the_receipt(self) -> None:
        receipt = self.action["receipt"]
        assert receipt is not None
        other = copy.deepcopy(self.jwks)
        for key in other["keys"]:
            key["kid"] = f"not-{key['kid']}"
        with self.assertRaises(VerificationError):
            verify_receipt(receipt, other)
        moved = copy.deepcopy(self.jwks)
        moved["keys"][0]["x"], moved["keys"][0]["y"] = moved["keys"][0]["y"], moved["keys"][0]["x"]
        with self.assertRaises(VerificationError):
            verify_receipt(receipt, moved)

    def test_the_accounts_audit_chain_verifies_and_an_altered_event_is_named(self) -> None:
        events = []
        after = 0
        while True:
            page = self.device.ok("GET", f"/audit?after={after}&limit=500")
            events += page["events"]
            if page["next_after"] is None:
                break
            after = page["next_after"]
        head = self.device.ok("GET", "/audit/head")
        verified = verify_audit_chain(events, head, self.jwks)
        self.assertEqual(verified["account_id"], self.account["account_id"])
        self.assertEqual((verified["head_seq"], verified["events"]), (head["seq"], len(events)))
        self.assertGreaterEqual(len(events), 2)

        altered = copy.deepcopy(events)
        altered[1]["actor"] = "someone else"
        with self.assertRaises(VerificationError) as caught:
            verify_audit_chain(altered, head, self.jwks)
        self.assertEqual(caught.exception.seq, altered[1]["seq"])
        with self.assertRaises(VerificationError) as gap:
            verify_audit_chain(events[:1] + events[2:], head, self.jwks)
        self.assertEqual(gap.exception.seq, events[1]["seq"])
        with self.assertRaises(VerificationError):
            verify_audit_chain(events, dict(head, seq=head["seq"] + 1), self.jwks)


class MissingExtraTest(unittest.TestCase):
    def test_without_cryptography_the_error_names_the_extra(self) -> None:
        # A Python whose `cryptography` cannot be imported, as on an install without the verify extra.
        script = (
            "import sys; sys.modules['cryptography'] = None\n"
            "from agent_auth import verify_receipt, MissingDependencyError\n"
            "try:\n"
            "    verify_receipt('a.b.c', {'keys': []})\n"
            "except MissingDependencyError as err:\n"
            "    assert isinstance(err, ImportError)\n"
            "    print(err)\n"
        )
        env = dict(os.environ, PYTHONPATH=SRC)
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("pip install agent-auth[verify]", done.stdout)
        self.assertIn("cryptography", done.stdout)


if __name__ == "__main__":
    unittest.main()


@unittest.skipUnless(HAS_CRYPTOGRAPHY, "cryptography is not installed (pip install agent-auth[verify])")
class CutChainTest(unittest.TestCase):
    """A chain retention cut: verified from the signed checkpoint the first page of /audit carries (the service's own
    signing is exercised by the TypeScript verifier's tests; here a key of the test's own signs, as the service
    does: ES256 over {account_id, seq, hash, at})."""

    @classmethod
    def setUpClass(cls) -> None:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

        from agent_auth.canonical_json import audit_event_hash

        key = ec.generate_private_key(ec.SECP256R1())
        numbers = key.public_key().public_numbers()
        cls.jwks = {
            "keys": [
                {
                    "kty": "EC",
                    "crv": "P-256",
                    "kid": "t1",
                    "x": b64url(numbers.x.to_bytes(32, "big")),
                    "y": b64url(numbers.y.to_bytes(32, "big")),
                }
            ]
        }

        def sign(claims: dict, typ: str) -> str:
            header = b64url(json.dumps({"alg": "ES256", "kid": "t1", "typ": typ}).encode())
            payload = b64url(json.dumps(claims).encode())
            r, s = decode_dss_signature(key.sign(f"{header}.{payload}".encode(), ec.ECDSA(hashes.SHA256())))
            return f"{header}.{payload}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"

        cls.sign = staticmethod(sign)
        # Events 1-3 were dropped; 4-6 remain, 4 linked to the hash of 3.
        chain, prev = [], "0" * 64
        for seq in range(1, 7):
            event = {"seq": seq, "at": f"2026-0{seq}-01T00:00:00.000Z", "request_id": None, "type": "rule_created",
                     "actor": "device:dev_x", "data": {"n": seq}, "prev_hash": prev}
            event["hash"] = audit_event_hash(event)
            chain.append(event)
            prev = event["hash"]
        cls.kept = chain[3:]
        dropped = chain[2]
        cls.checkpoint = cls.signed_point("acc_1", dropped, "aa-audit-checkpoint+jws")
        cls.head = cls.signed_point("acc_1", chain[5], "aa-audit-head+jws")

    @classmethod
    def signed_point(cls, account: str, event: dict, typ: str) -> dict:
        point = {"seq": event["seq"], "hash": event["hash"], "at": event["at"]}
        return {**point, "signature": cls.sign({"account_id": account, **point}, typ)}

    def test_the_remaining_chain_verifies_from_the_checkpoint(self) -> None:
        verified = verify_audit_chain(self.kept, self.head, self.jwks, checkpoint=self.checkpoint)
        self.assertEqual((verified["head_seq"], verified["events"], verified["checkpoint_seq"]), (6, 3, 3))

    def test_without_the_checkpoint_nothing_ties_the_first_event_to_a_signed_hash(self) -> None:
        # Still verifies as a later page (seq 4 onwards), but says nothing of where the chain was cut.
        self.assertNotIn("checkpoint_seq", verify_audit_chain(self.kept, self.head, self.jwks))

    def test_a_checkpoint_altered_or_of_another_account_is_refused(self) -> None:
        altered = {**self.checkpoint, "hash": "f" * 64}
        with self.assertRaisesRegex(VerificationError, "differs from what its signature covers"):
            verify_audit_chain(self.kept, self.head, self.jwks, checkpoint=altered)
        other = self.signed_point("acc_2", {**self.kept[0], "seq": 3, "hash": self.checkpoint["hash"],
                                            "at": self.checkpoint["at"]}, "aa-audit-checkpoint+jws")
        with self.assertRaisesRegex(VerificationError, "signed for account acc_2"):
            verify_audit_chain(self.kept, self.head, self.jwks, checkpoint=other)
        as_head = {**self.checkpoint, "signature": self.signed_point("acc_1", self.kept[0], "aa-audit-head+jws")["signature"]}
        with self.assertRaises(VerificationError):
            verify_audit_chain(self.kept, self.head, self.jwks, checkpoint=as_head)

    def test_events_must_start_right_after_the_checkpoint_and_link_to_it(self) -> None:
        with self.assertRaisesRegex(VerificationError, "event 4 is missing"):
            verify_audit_chain(self.kept[1:], self.head, self.jwks, checkpoint=self.checkpoint)
        unlinked = [{**self.kept[0], "prev_hash": "e" * 64}, *self.kept[1:]]
        with self.assertRaisesRegex(VerificationError, "event 4: prev_hash"):
            verify_audit_chain(unlinked, self.head, self.jwks, checkpoint=self.checkpoint)

    def test_a_head_before_the_checkpoint_cannot_be_checked(self) -> None:
        early = {"seq": 2, "hash": "a" * 64, "at": "2026-02-01T00:00:00.000Z"}
        head = {**early, "signature": self.sign({"account_id": "acc_1", **early}, "aa-audit-head+jws")}
        with self.assertRaisesRegex(VerificationError, "lies before the checkpoint"):
            verify_audit_chain([], head, self.jwks, checkpoint=self.checkpoint)
