"""Encrypted payloads: sealing, key rotation, tampering, key files, and the data converter."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from temporalio.api.common.v1 import Payload
from temporalio.api.failure.v1 import Failure
from temporalio.converter import (
    DataConverter,
    DefaultFailureConverter,
    DefaultFailureConverterWithEncodedAttributes,
)
from temporalio.exceptions import ApplicationError

from adk_temporal.cli import main
from adk_temporal.codec import (
    ENCRYPTED_ENCODING,
    EncryptionCodec,
    EncryptionKeys,
    KeyFileError,
    PayloadAuthenticationError,
    UnknownKeyError,
    codec_from_env,
    load_keys,
    rotate_key_file,
    write_key_file,
)
from adk_temporal.converter import adk_data_converter
from adk_temporal.errors import AdkRequestError, EncryptionError

MARKER = "Zx-secret-marker-7q"
KEY = base64.b64encode(b"k" * 32).decode()


def _payload(text: str = MARKER) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=json.dumps({"note": text}).encode())


def _codec(*, compress: bool = False) -> EncryptionCodec:
    return EncryptionCodec(EncryptionKeys.generate(compress=compress))


def _meta(payload: Payload, key: str) -> str:
    return payload.metadata[key].decode()


async def test_round_trip_restores_the_payload_and_hides_it() -> None:
    """A sealed payload carries no plaintext, names its key, and opens to the original."""
    codec = _codec()
    original = [_payload(), Payload(metadata={"encoding": b"binary/plain"}, data=b"\x00\xff")]
    sealed = await codec.encode(original)
    assert all(MARKER.encode() not in p.SerializeToString() for p in sealed)
    assert [_meta(p, "encoding") for p in sealed] == [ENCRYPTED_ENCODING] * 2
    assert {_meta(p, "encryption-key-id") for p in sealed} == {"k1"}
    assert {_meta(p, "encryption-cipher") for p in sealed} == {"AES-256-GCM"}
    assert await codec.decode(sealed) == original


async def test_every_payload_gets_its_own_nonce() -> None:
    """Sealing the same payload twice gives different ciphertexts."""
    codec = _codec()
    first, second = await codec.encode([_payload(), _payload()])
    assert first.data[:12] != second.data[:12]
    assert first.data != second.data


async def test_payloads_that_are_not_encrypted_pass_through_decoding() -> None:
    """Histories written before encryption was turned on stay readable."""
    plain = _payload()
    assert await _codec().decode([plain]) == [plain]


async def test_rotation_new_key_writes_old_key_still_reads() -> None:
    """After a rotation new payloads use the new key; the old key still opens old ones."""
    before = EncryptionKeys.generate()
    after = before.rotated()
    old_codec, new_codec = EncryptionCodec(before), EncryptionCodec(after)
    [old] = await old_codec.encode([_payload("old")])
    [new] = await new_codec.encode([_payload("new")])
    assert after.current == "k2"
    assert _meta(old, "encryption-key-id") == "k1"
    assert _meta(new, "encryption-key-id") == "k2"
    assert await new_codec.decode([old, new]) == [_payload("old"), _payload("new")]
    with pytest.raises(UnknownKeyError, match=r"'k2'.*holds k1"):
        await old_codec.decode([new])


async def test_a_process_rereads_its_changed_key_file_for_an_unknown_key(tmp_path: Path) -> None:
    """A worker started before a rotation opens payloads sealed with the new key."""
    path = tmp_path / "keys.json"
    rotate_key_file(path)
    running = EncryptionCodec.from_file(path)
    rotate_key_file(path)
    # A different size makes the change visible even where mtimes are coarse.
    assert EncryptionCodec.from_file(path).current_key_id == "k2"
    [new] = await EncryptionCodec.from_file(path).encode([_payload()])
    assert await running.decode([new]) == [_payload()]
    assert running.key_ids == ["k1", "k2"]


async def test_a_removed_key_is_an_error_naming_the_key_and_the_file(tmp_path: Path) -> None:
    """A payload whose key left the key file fails with UnknownKeyError naming both."""
    path = tmp_path / "keys.json"
    keys = rotate_key_file(path)
    [sealed] = await EncryptionCodec.from_file(path).encode([_payload()])
    write_key_file(path, EncryptionKeys("k9", {"k9": os.urandom(32)}))
    with pytest.raises(UnknownKeyError) as caught:
        await EncryptionCodec.from_file(path).decode([sealed])
    assert f"'{keys.current}'" in str(caught.value)
    assert str(path) in str(caught.value)
    assert isinstance(caught.value, EncryptionError)


async def test_a_payload_without_a_key_id_is_refused() -> None:
    """An encrypted payload whose key id metadata is gone is refused, not guessed."""
    codec = _codec()
    [sealed] = await codec.encode([_payload()])
    del sealed.metadata["encryption-key-id"]
    with pytest.raises(PayloadAuthenticationError, match="no encryption-key-id"):
        await codec.decode([sealed])


def _flip(data: bytes, index: int) -> bytes:
    return data[:index] + bytes([data[index] ^ 1]) + data[index + 1 :]


@pytest.mark.parametrize("index", [0, 12, -1], ids=["nonce", "ciphertext", "tag"])
async def test_an_altered_byte_fails_authentication(index: int) -> None:
    """Flipping one bit of nonce, ciphertext or tag is detected."""
    codec = _codec()
    [sealed] = await codec.encode([_payload()])
    sealed.data = _flip(sealed.data, index)
    with pytest.raises(PayloadAuthenticationError, match="failed authentication"):
        await codec.decode([sealed])


async def test_altered_metadata_fails_authentication() -> None:
    """Key id and compression flag are authenticated: rewriting either is detected."""
    keys = EncryptionKeys.generate().rotated()
    codec = EncryptionCodec(keys)
    [sealed] = await codec.encode([_payload()])
    relabelled = Payload()
    relabelled.CopyFrom(sealed)
    relabelled.metadata["encryption-key-id"] = b"k1"
    with pytest.raises(PayloadAuthenticationError):
        await codec.decode([relabelled])
    flagged = Payload()
    flagged.CopyFrom(sealed)
    flagged.metadata["compression"] = b"zlib"
    with pytest.raises(PayloadAuthenticationError):
        await codec.decode([flagged])


async def test_the_wrong_key_under_the_same_id_fails_authentication() -> None:
    """A key file whose k1 is another key cannot pass off a payload as opened."""
    [sealed] = await _codec().encode([_payload()])
    with pytest.raises(PayloadAuthenticationError, match="not the key that sealed it"):
        await _codec().decode([sealed])


async def test_a_truncated_payload_is_refused() -> None:
    """Data shorter than nonce plus tag is reported as truncated."""
    codec = _codec()
    [sealed] = await codec.encode([_payload()])
    sealed.data = sealed.data[:20]
    with pytest.raises(PayloadAuthenticationError, match="truncated"):
        await codec.decode([sealed])


async def test_compression_is_flagged_and_used_only_when_it_pays() -> None:
    """With compress on, a repetitive payload is zlib-compressed and says so; noise is not."""
    compressing = _codec(compress=True)
    repetitive = _payload(MARKER * 200)
    noise = Payload(metadata={"encoding": b"binary/plain"}, data=os.urandom(2000))
    packed, unpacked = await compressing.encode([repetitive, noise])
    [plain_sealed] = await _codec().encode([repetitive])
    assert _meta(packed, "compression") == "zlib"
    assert len(packed.data) < len(plain_sealed.data) // 10
    assert "compression" not in unpacked.metadata
    assert "compression" not in plain_sealed.metadata
    assert await compressing.decode([packed, unpacked]) == [repetitive, noise]


async def test_a_compressed_payload_opens_with_a_codec_that_does_not_compress() -> None:
    """Reading follows each payload's flag, whatever the reader's own setting."""
    keys = EncryptionKeys.generate(compress=True)
    [packed] = await EncryptionCodec(keys).encode([_payload(MARKER * 50)])
    reader = EncryptionCodec(EncryptionKeys(keys.current, keys.keys, compress=False))
    assert await reader.decode([packed]) == [_payload(MARKER * 50)]


# ------------------------------------------------------------------ key files


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "is not JSON"),
        ("[1, 2]", "must hold a JSON object"),
        (json.dumps({"current": "k1", "keys": {"k1": KEY}, "extra": 1}), "unknown field"),
        (json.dumps({"keys": {"k1": KEY}}), "'current' must be the id"),
        (json.dumps({"current": "k1", "keys": {}}), "'keys' must be a non-empty object"),
        (json.dumps({"current": "k2", "keys": {"k1": KEY}}), "'current' is 'k2'"),
        (json.dumps({"current": "k1", "keys": {"k1": "not base64!"}}), "not valid base64"),
        (json.dumps({"current": "k1", "keys": {"k1": 7}}), "must be a base64 string"),
        (
            json.dumps({"current": "k1", "keys": {"k1": base64.b64encode(b"s" * 16).decode()}}),
            "is 16 bytes; AES-256 needs exactly 32",
        ),
        (json.dumps({"current": "a b", "keys": {"a b": KEY}}), "must be 1-64 characters"),
        (json.dumps({"current": "k1", "keys": {"k1": KEY}, "compress": "yes"}), "true or false"),
    ],
    ids=[
        "not-json",
        "not-object",
        "unknown-field",
        "no-current",
        "no-keys",
        "current-missing",
        "bad-base64",
        "key-not-string",
        "short-key",
        "bad-id",
        "compress-not-bool",
    ],
)
def test_a_malformed_key_file_is_a_typed_error_naming_the_problem(
    tmp_path: Path, text: str, problem: str
) -> None:
    """Each defect of a key file is a KeyFileError naming the file and what is wrong."""
    path = tmp_path / "keys.json"
    path.write_text(text)
    with pytest.raises(KeyFileError) as caught:
        load_keys(path)
    assert problem in str(caught.value)
    assert str(path) in str(caught.value)
    assert isinstance(caught.value, AdkRequestError) and isinstance(caught.value, ValueError)


def test_a_missing_key_file_says_how_to_create_one(tmp_path: Path) -> None:
    """A path that names nothing points at `adk-temporal rotate-key`."""
    with pytest.raises(KeyFileError, match="does not exist; create one with `adk-temporal"):
        load_keys(tmp_path / "absent.json")


def test_key_files_are_written_owner_only_and_rotate_keeping_old_keys(tmp_path: Path) -> None:
    """rotate_key_file creates a 0600 file, then adds k2 as current and keeps k1."""
    path = tmp_path / "secrets" / "keys.json"
    first = rotate_key_file(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    second = rotate_key_file(path)
    assert (first.current, second.current) == ("k1", "k2")
    assert second.keys["k1"] == first.keys["k1"]
    assert load_keys(path) == second
    assert rotate_key_file(path, "2027-01").current == "2027-01"
    with pytest.raises(KeyFileError, match="already in the key ring"):
        rotate_key_file(path, "k1")


def test_key_material_never_appears_in_repr() -> None:
    """A key ring in a log line or traceback shows its ids, not its keys."""
    keys = EncryptionKeys("k1", {"k1": b"k" * 32})
    assert KEY not in repr(keys) and "kkkk" not in repr(keys)
    assert "k1" in repr(keys)


def test_the_environment_names_the_key_file(tmp_path: Path) -> None:
    """ADK_ENCRYPTION_KEY_FILE gives a codec over that file; unset gives none."""
    path = tmp_path / "keys.json"
    rotate_key_file(path)
    codec = codec_from_env({"ADK_ENCRYPTION_KEY_FILE": str(path)})
    assert codec is not None and codec.current_key_id == "k1"
    assert codec_from_env({}) is None
    with pytest.raises(KeyFileError):
        codec_from_env({"ADK_ENCRYPTION_KEY_FILE": str(tmp_path / "absent.json")})


# ------------------------------------------------------------------ the data converter


def test_the_converter_carries_the_codec_and_encodes_failure_messages() -> None:
    """With a codec, failure messages are encoded too; the worker's call keeps the codec."""
    codec = _codec()
    client_side = adk_data_converter(codec=codec)
    assert client_side.payload_codec is codec
    assert client_side.failure_converter_class is DefaultFailureConverterWithEncodedAttributes
    # AdkPlugin configures the worker by calling adk_data_converter(existing) on the
    # client's converter: the codec must survive that.
    worker_side = adk_data_converter(client_side)
    assert worker_side.payload_codec is codec
    assert worker_side.failure_converter_class is DefaultFailureConverterWithEncodedAttributes
    plain = adk_data_converter()
    assert plain.payload_codec is None
    assert plain.failure_converter_class is DefaultFailureConverter


def test_a_users_own_failure_converter_is_kept() -> None:
    """Only Temporal's default failure converter is swapped for the encoding one."""

    class Mine(DefaultFailureConverter):
        pass

    base = DataConverter(failure_converter_class=Mine)
    assert adk_data_converter(base, codec=_codec()).failure_converter_class is Mine


async def test_values_and_failures_reach_history_sealed() -> None:
    """Converted values and failure messages carry no plaintext and decode back."""
    converter = adk_data_converter(codec=_codec())
    payloads = await converter.encode([{"city": MARKER}])
    assert MARKER.encode() not in payloads[0].SerializeToString()
    assert await converter.decode(payloads) == [{"city": MARKER}]
    failure = Failure()
    await converter.encode_failure(ApplicationError(f"tool failed for {MARKER}"), failure)
    assert MARKER.encode() not in failure.SerializeToString()
    decoded = await converter.decode_failure(failure)
    assert MARKER in str(decoded)


async def test_without_a_key_an_encrypted_payload_is_an_error_saying_what_to_pass() -> None:
    """A process without the key file gets EncryptionError naming the option, not a KeyError."""
    sealed = await adk_data_converter(codec=_codec()).encode(["hello"])
    with pytest.raises(EncryptionError, match="--encryption-key-file or set ADK_ENCRYPTION"):
        await adk_data_converter().decode(sealed)


# ------------------------------------------------------------------ the command line


def test_the_cli_refuses_a_bad_key_file_before_running(tmp_path: Path) -> None:
    """`--encryption-key-file` naming a broken file is a usage error with the reason."""
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"current": "k1", "keys": {"k1": "c2hvcnQ="}}))
    result = CliRunner().invoke(main, ["pending", "--encryption-key-file", str(path)])
    assert result.exit_code == 2
    assert "AES-256 needs exactly 32" in result.output
    env = {"ADK_ENCRYPTION_KEY_FILE": str(tmp_path / "absent.json")}
    result = CliRunner().invoke(main, ["list"], env=env)
    assert result.exit_code == 2
    assert "does not exist" in result.output


def test_codec_server_needs_a_key_file_and_a_token(tmp_path: Path) -> None:
    """`codec-server` refuses to start without a key file, or without a usable token."""
    env = {"ADK_ENCRYPTION_KEY_FILE": "", "ADK_CODEC_TOKEN": "", "ADK_CODEC_TOKEN_FILE": ""}
    result = CliRunner().invoke(main, ["codec-server"], env=env)
    assert result.exit_code == 2
    assert "needs the key file" in result.output
    keys = tmp_path / "keys.json"
    rotate_key_file(keys)
    result = CliRunner().invoke(main, ["codec-server", "--encryption-key-file", str(keys)], env=env)
    assert result.exit_code == 2
    assert "needs a token" in result.output
    result = CliRunner().invoke(
        main,
        ["codec-server", "--encryption-key-file", str(keys)],
        env={**env, "ADK_CODEC_TOKEN": "short"},
    )
    assert result.exit_code == 2
    assert "at least 16" in result.output
    help_text = CliRunner().invoke(main, ["codec-server", "--help"]).output
    assert "--token-file" in help_text and "--token " not in help_text
