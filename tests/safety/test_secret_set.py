"""The session's known secrets: found and masked in every encoding a command could print them in."""

from __future__ import annotations

import base64
import re
import subprocess
import threading
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from mini_agent.safety.encodings import literals, strip_spaces
from mini_agent.safety.secrets import SecretSet

TOKEN = "ghp_0123456789abcdefSECRET"
ENV = f"PATH=/usr/bin:/bin\nHOME=/home/someone\nGITHUB_TOKEN={TOKEN}\nLANG=C.UTF-8\nTERM=xterm\n"
SECRET_CHARS = st.characters(min_codepoint=33, max_codepoint=0x2FF, exclude_characters="*")


def full_forms(secret: str) -> set[str]:
    """The secret encoded on its own, every way a command prints it."""
    data = secret.encode()
    forms = {secret, secret[::-1], quote(secret, safe=""), data.hex(), data.hex().upper()}
    for encoded in (base64.b64encode(data), base64.urlsafe_b64encode(data), base64.b32encode(data)):
        forms |= {encoded.decode(), encoded.decode().rstrip("=")}
    return forms


def leaked(secret: str, text: str) -> set[str]:
    """Encodings of the secret still readable in the text, also across line wraps."""
    shapes = full_forms(secret) | set(literals(secret))
    return {form for form in shapes if form in text or form in strip_spaces(text)}


def wrap(text: str, width: int) -> str:
    return "\n".join(text[index : index + width] for index in range(0, len(text), width))


ENCODERS = {
    "raw": lambda data: data.decode("utf-8", "replace"),
    "base64": lambda data: base64.encodebytes(data).decode(),  # wrapped at 76 like `base64`
    "base64 url-safe unpadded": lambda data: base64.urlsafe_b64encode(data).decode().rstrip("="),
    "xxd -p": lambda data: wrap(data.hex(), 60),
    "hex upper": lambda data: data.hex().upper(),
    "base32": lambda data: wrap(base64.b32encode(data).decode(), 76),
    "url": lambda data: quote(data.decode("utf-8", "replace"), safe=""),
    "rev": lambda data: "\n".join(line[::-1] for line in data.decode("utf-8", "replace").split("\n")),
}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    secret=st.text(SECRET_CHARS, min_size=8, max_size=40),
    before=st.binary(max_size=7).map(lambda data: data.replace(b"\n", b"")),
    after=st.binary(max_size=7),
    outside=st.text(max_size=30),
    encoding=st.sampled_from(sorted(ENCODERS)),
)
def test_masked_text_holds_no_encoding_of_a_secret_wherever_it_sits(secret, before, after, outside, encoding):
    secrets = SecretSet([(secret, "TEST_TOKEN")])
    text = outside + ENCODERS[encoding](b"X=" + before + secret.encode() + after) + outside
    assert not leaked(secret, secrets.mask(text))


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200), secrets=st.lists(st.text(SECRET_CHARS, min_size=8, max_size=30), max_size=3))
def test_masking_is_idempotent_and_text_without_secrets_is_untouched(text, secrets):
    known = SecretSet([(value, "S") for value in secrets])
    once = known.mask(text)
    assert known.mask(once) == once
    if not known.find(text):
        assert once == text


@pytest.mark.parametrize(
    "command",
    [["base64"], ["base64", "-w0"], ["base32"], ["xxd", "-p"], ["xxd"], ["xxd", "-u", "-g1"], ["hexdump", "-C"]]
    + [["od", "-c"], ["od", "-An", "-tx1"], ["od", "-tx1"], ["rev"], ["tr", "\\n", "\\0"]],
)
def test_what_real_encoders_print_is_masked(command):
    try:
        printed = subprocess.run(command, input=ENV.encode(), capture_output=True, check=True).stdout
    except FileNotFoundError:
        pytest.skip(f"{command[0]} is not installed")
    masked = SecretSet([(TOKEN, "GITHUB_TOKEN")]).mask(printed.decode("utf-8", "replace"))
    assert not leaked(TOKEN, masked), masked
    assert "****" in masked
    if command[0] in ("xxd", "hexdump", "od") and "-p" not in command and "-An" not in command:
        assert masked.startswith("0000000")  # offsets, and the lines the secret is not on, stay readable


def test_a_nul_separated_environment_is_masked():
    environ = "\0".join(ENV.splitlines()).encode() + b"\0"
    masked = SecretSet([(TOKEN, "GITHUB_TOKEN")]).mask(environ.decode())
    assert TOKEN not in masked and "GITHUB_TOKEN=****\0" in masked


def test_a_secret_containing_another_is_masked_whole_and_named_by_the_longer():
    secrets = SecretSet([("abcdefgh", "SHORT_KEY"), ("xx-abcdefgh-yy", "LONG_KEY")])
    assert secrets.mask("a xx-abcdefgh-yy b") == "a **** b"
    assert secrets.find("xx-abcdefgh-yy")[0].secret.label == "LONG_KEY"


def test_short_values_and_the_mask_itself_are_not_secrets():
    secrets = SecretSet()
    assert not secrets.add("true", "FLAG") and not secrets.add("1234567", "PIN") and not secrets.add("****", "X")
    assert secrets.add("long-enough-value", "X") and not secrets.add("long-enough-value", "Y")
    assert len(secrets) == 1 and secrets.named("X").hint == "17 characters"
    assert SecretSet([("sk-ant-0123456789abcdefXy", "KEY")]).named("KEY").hint == "sk-…Xy"


def test_the_projects_env_files_are_read_on_first_use_and_again_when_they_change(tmp_path):
    (tmp_path / ".env").write_text("FOO_TOKEN=first-value-123\nPORT=8080\nDEBUG=true\n")
    (tmp_path / ".env.example").write_text("FOO_TOKEN=example-value-123\n")
    secrets = SecretSet(project=tmp_path)
    assert secrets.mask("first-value-123") == "first-value-123"  # nothing read before the first refresh
    secrets.refresh()
    assert secrets.values() == ["first-value-123"]
    assert secrets.named("FOO_TOKEN").label == "FOO_TOKEN from .env"
    (tmp_path / ".env").write_text("FOO_TOKEN=second-value-4567\n")
    (tmp_path / ".env.local").write_text("DATABASE_URL=postgres://app:hunter2hunter2@db:5432/app\n")
    secrets.refresh()
    assert set(secrets.values()) == {"first-value-123", "second-value-4567", "hunter2hunter2"}
    assert secrets.mask("url postgres://app:hunter2hunter2@db") == "url postgres://app:****@db"


def test_the_set_is_safe_to_grow_while_other_threads_mask():
    secrets = SecretSet([(TOKEN, "GITHUB_TOKEN")])
    failures = []

    def mask_repeatedly():
        for _ in range(200):
            if TOKEN in secrets.mask(f"t={TOKEN}"):
                failures.append("leak")

    threads = [threading.Thread(target=mask_repeatedly) for _ in range(3)]
    for thread in threads:
        thread.start()
    for index in range(100):
        secrets.add(f"another-secret-{index:04d}", f"S{index}")
    for thread in threads:
        thread.join()
    assert not failures and len(secrets) == 101


def test_a_secret_in_the_middle_of_a_megabyte_is_masked():
    """(What this costs is a benchmark row: benchmarks/_faults.py.)"""
    values = [f"secret-{index:02d}-{'k' * index}-Zq9{index}" for index in range(20)]
    secrets = SecretSet([(value, f"S{index}") for index, value in enumerate(values)])
    line = "2024-01-01 12:00:00 INFO request served in 12 ms from 10.0.0.7 path=/api/items?page=3\n"
    text = (line * (1_000_000 // len(line)))[:1_000_000]
    text = text[:500_000] + base64.b64encode(values[7].encode()).decode() + text[500_000:]
    masked = secrets.mask(text)
    assert not leaked(values[7], masked) and len(masked) < len(text)


def test_the_halves_of_a_secret_cut_by_output_truncation_are_masked():
    secrets = SecretSet([(TOKEN, "GITHUB_TOKEN")])
    text = f"log {TOKEN[:11]}\n\n[... 5000 characters omitted ...]\n\n{TOKEN[11:]} more\n"
    assert secrets.mask(text) == "log ****\n\n[... 5000 characters omitted ...]\n\n**** more\n"
    assert secrets.mask("ends ghp_0\n\n[... 9 characters omitted ...]\n\nnothing") == (
        "ends ghp_0\n\n[... 9 characters omitted ...]\n\nnothing"  # too short a piece to tell
    )


def test_the_session_file_masks_what_the_set_learns_after_it_was_opened(tmp_path):
    from mini_agent.sessions.journal import SessionWriter

    secrets = SecretSet()
    path = tmp_path / "session.jsonl"
    with SessionWriter(path, {"type": "session", "version": 1}, secrets) as writer:
        secrets.add(TOKEN, "GITHUB_TOKEN")  # read from a credential file mid-session
        encoded = base64.b64encode(f"GITHUB_TOKEN={TOKEN}".encode()).decode()
        writer.write({"type": "message", "message": {"role": "user", "content": encoded, TOKEN: "as a key"}})
    assert not leaked(TOKEN, path.read_text()) and "****" in path.read_text()


def test_texts_shorter_than_any_secret_are_skipped_but_one_exactly_a_secret_is_masked():
    secrets = SecretSet([("abcd1234efgh", "X")])
    assert secrets.mask("abcd1234efg") == "abcd1234efg"  # a streamed delta shorter than every literal
    assert secrets.mask("abcd1234efgh") == "****" and secrets.mask("hgfe4321dcba") == "****"  # raw, reversed


CASE_CHANGES = st.lists(st.booleans(), min_size=200, max_size=200)


def recased(text: str, flips: list[bool]) -> str:
    """ASCII letters case-swapped where `flips` says so (`ſ`.swapcase() is `S`: other letters are left alone)."""
    flips = flips + [False] * len(text)
    pairs = zip(text, flips, strict=False)
    return "".join(char.swapcase() if flip and char.isascii() else char for char, flip in pairs)


@settings(max_examples=200, deadline=None)
@given(
    token=st.binary(min_size=8, max_size=40),
    flips=CASE_CHANGES,
    around=st.text(st.characters(exclude_categories=["L", "N"], exclude_characters="*"), max_size=10),
)
def test_a_hex_token_in_any_letter_case_is_found_and_masked_in_place(token, flips, around):
    """Hex and base32 mean the same in either case; a letter-case change must not hide a token, and folding case
    must not shift what is masked (`İ` lower-cased is two characters: the text around stays whole)."""
    secret = token.hex()
    secrets = SecretSet([(secret, "HEX_TOKEN")])
    base32 = base64.b32encode(secret.encode()).decode().rstrip("=")
    for shown in (recased(secret, flips), secret.upper(), recased(base32, flips)):
        text = f"İ{around} {shown} {around}İ"
        masked = secrets.mask(text)
        assert masked.startswith(f"İ{around} ****") and masked.endswith(f" {around}İ"), (shown, masked)
        assert not leaked(secret, masked.lower()), (shown, masked)


@settings(max_examples=150, deadline=None)
@given(secret=st.text(SECRET_CHARS, min_size=8, max_size=30), flips=CASE_CHANGES)
def test_any_secret_with_its_letters_recased_is_still_found(secret, flips):
    secrets = SecretSet([(secret, "S")])
    data = secret.encode()
    for shown in (recased(secret, flips), data.hex().upper(), recased(data.hex(), flips), recased(secret[::-1], flips)):
        assert secrets.find(f"x={shown};"), shown
        assert secrets.find(f"İ x={shown};"), shown  # a text `str.lower` would lengthen is folded another way


USERINFO_CHARS = st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="/@:'\"<>%*")


@settings(max_examples=200, deadline=None)
@given(
    user=st.text(USERINFO_CHARS, max_size=12),
    password=st.text(USERINFO_CHARS, min_size=1, max_size=40).filter(lambda value: not set(value) <= {"x", "X", "."}),
    scheme=st.sampled_from(["https", "http", "postgres", "git+ssh", "redis"]),
    before=st.sampled_from(["", "origin\t", "url = ", "DATABASE_URL="]),
)
@example(user="u", password="$000000A", scheme="https", before="")  # a `$NAME` placeholder: shown, not learned
def test_a_password_in_a_urls_userinfo_never_survives_tool_output(user, password, scheme, before):
    assume(password not in user)  # a user name holding the password is masked too
    secrets = SecretSet()
    url = f"{scheme}://{user}:{password}@host.example/path"
    text = f"{before}{url} (fetch)\nnext line"
    masked = secrets.mask_output(text, "the output of bash")
    placeholder = re.fullmatch(r"\$\{?\w+\}?|\{\{.*\}\}", password)  # `${TOKEN}`, `{{ token }}` stay readable
    shown = password if placeholder else "****"
    assert masked == f"{before}{scheme}://{user}:{shown}@host.example/path (fetch)\nnext line"
    if (
        not placeholder
        and len(password) >= 8
        and any(c.isalpha() for c in password)
        and any(c.isdigit() for c in password)
    ):
        assert secrets.find(f"later: {password}"), password  # known now: sending it anywhere asks
