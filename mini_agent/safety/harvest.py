"""The secret values in a credential file: what read_file (or the project's own `.env`) tells the agent.

Dotenv files give every `KEY=VALUE` that could be a secret; ini, yaml, toml, npmrc and json files give the values
of keys that name a password, token, secret or key; `.netrc` its passwords; private keys (PEM, OpenSSH) their
body, line by line, so a part of a key printed on its own is recognised too; URLs with a password their password.
The same URL passwords (and tokens given as a URL's user name) are what `userinfo` finds in any tool output.
Values that cannot be secrets (`true`, `8080`, `localhost`, a path, a plain URL) are skipped: masking them would
garble ordinary output and make every request that mentions them ask.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import json
import re
from collections.abc import Iterator
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

SECRET_KEY = re.compile(
    r"pass(word|wd|phrase)?|secret|token|auth|api[_-]?key|private[_-]?key|access[_-]?key|credential|"
    r"client[_-]?key|signing[_-]?key|session[_-]?key|_key$|^key$",
    re.IGNORECASE,
)
NOT_SECRET = frozenset(
    "true false yes no on off null none nil undefined localhost development production staging test testing "
    "debug info warning error enabled disabled default changeme example".split()
)
DOTENV_NAMES = (".env", ".env.*", "*.env", ".envrc")
MIN_LENGTH = 8
_PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]*PRIVATE KEY[A-Z0-9 ]*)-----(.*?)-----END", re.DOTALL)
_DOTENV = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*?)\s*$")
_KEY_VALUE = re.compile(r"""^\s*["']?([^\s"'=:#;]+)["']?\s*[:=]\s*(.+?)\s*,?\s*$""")
_SCOPED = re.compile(r"^\s*(//[^=\s]+)\s*=\s*(.+?)\s*$")  # npmrc: `//registry.npmjs.org/:_authToken=...`
_URL_WITH_PASSWORD = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/@:]*:[^\s/@]+@[^\s'\"]+")
_USERINFO = re.compile(
    r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<user>[^\s/@:'\"<>]*)(?::(?P<password>[^\s/@'\"<>]+))?@"
)
_PLACEHOLDER = re.compile(r"\$\{?\w+\}?|\{\{.*\}\}|<[^>]*>|%\(\w+\)s|\*+|x+|\.\.\.|…", re.IGNORECASE)


def values_in(name: str, text: str) -> list[tuple[str, str]]:
    """(label, value) for each secret value in a file's text; `name` is the file's name, shown in labels."""
    found: list[tuple[str, str]] = list(_private_keys(name, text))
    base = PurePosixPath(name).name
    if any(fnmatch.fnmatchcase(base, pattern) for pattern in DOTENV_NAMES):
        found += _dotenv(name, text)
    elif base in (".netrc", "_netrc"):
        words = text.split()
        pairs = zip(words, words[1:], strict=False)
        found += [(f"a password in {name}", value) for key, value in pairs if key in ("password", "passwd")]
    elif base == ".pgpass":
        found += [(f"a password in {name}", line.split(":")[-1]) for line in text.splitlines() if line.count(":") >= 4]
    else:
        try:
            found += list(_json_values(name, json.loads(text), ""))
        except (ValueError, RecursionError):
            found += _key_values(name, text)
    found += [(f"a password in {name}", password) for password in _url_passwords(text)]
    return [(label, value) for label, value in dict.fromkeys(found) if len(value) >= 6]


def plausible(value: str, named_secret: bool) -> bool:
    """Whether a value could be a secret: long enough, not a flag, number, path or plain URL; a value under a
    name that does not say "secret" must also look random (letters and digits, or long)."""
    value = value.strip()
    if len(value) < MIN_LENGTH or value.lower() in NOT_SECRET:
        return False
    if re.fullmatch(r"[\d.:,_ -]+", value) or value.startswith(("/", "./", "../", "~/")):
        return False
    if "://" in value:
        return named_secret and not _URL_WITH_PASSWORD.match(value)  # a password in it is harvested on its own
    if named_secret:
        return True
    if any(char.isspace() for char in value):
        return False
    letters, digits = any(char.isalpha() for char in value), any(char.isdigit() for char in value)
    return (letters and digits) or len(value) >= 20


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    if " #" in value:  # a comment after an unquoted value
        value = value.split(" #", 1)[0].rstrip()
    return value


def _dotenv(name: str, text: str) -> list[tuple[str, str]]:
    found = []
    for line in text.splitlines():
        match = _DOTENV.match(line)
        if match:
            key, value = match.group(1), _unquote(match.group(2))
            if plausible(value, bool(SECRET_KEY.search(key))):
                found.append((f"{key} from {name}", value))
    return found


def _key_values(name: str, text: str) -> list[tuple[str, str]]:
    found = []
    for line in text.splitlines():
        match = _SCOPED.match(line) or _KEY_VALUE.match(line)
        if match and SECRET_KEY.search(match.group(1)):
            key, value = match.group(1), _unquote(match.group(2))
            if plausible(value, True):
                found.append((f"{key} in {name}", value))
                found += _decoded_auth(name, key, value)
    return found


def _json_values(name: str, value: object, key: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for child_key, child in value.items():
            yield from _json_values(name, child, str(child_key))
    elif isinstance(value, list):
        for child in value:
            yield from _json_values(name, child, key)
    elif isinstance(value, str) and SECRET_KEY.search(key):
        if "-----BEGIN" in value:
            yield from _private_keys(name, value)
        elif plausible(value, True):
            yield f"{key} in {name}", value
            yield from _decoded_auth(name, key, value)


def _decoded_auth(name: str, key: str, value: str) -> list[tuple[str, str]]:
    """docker's `auth` and npm's `_auth` are base64 of `user:password`: the password is a secret of its own."""
    if key.lower().lstrip("_") != "auth":
        return []
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return []
    password = decoded.partition(":")[2]
    return [(f"a password in {name}", password)] if len(password) >= 6 else []


def _private_keys(name: str, text: str) -> Iterator[tuple[str, str]]:
    for match in _PEM.finditer(text):
        label = f"the private key in {name}"
        lines = [line.strip() for line in match.group(2).replace("\\n", "\n").splitlines()]
        body = [line for line in lines if line and ":" not in line]  # skip `Proc-Type:` style headers
        for line in body:
            if len(line) >= 16:
                yield label, line
        if body:
            yield label, "".join(body)


def _url_passwords(text: str) -> list[str]:
    passwords = []
    for match in _URL_WITH_PASSWORD.finditer(text):
        try:
            password = urlsplit(match.group()).password
        except ValueError:
            continue
        if password and password.lower() not in NOT_SECRET:
            passwords.append(password)
    return passwords


def userinfo(text: str) -> list[tuple[int, int, str, bool]]:
    """(start, end, value, could be a secret) for each password in a URL's userinfo (`https://me:PASSWORD@host`)
    and each user name that looks like a token (`https://ghp_...@github.com`); placeholders (`${TOKEN}`,
    `<password>`, `****`) are left out. "Could be a secret": worth adding to the known secrets (not `password`)."""
    found = []
    for match in _USERINFO.finditer(text):
        user, password = match.group("user"), match.group("password")
        if password is not None:
            if not _PLACEHOLDER.fullmatch(password):
                plain = unquote(password)
                found.append((match.start("password"), match.end("password"), plain, plausible(plain, False)))
        elif len(user) >= 20 and not _PLACEHOLDER.fullmatch(user) and plausible(unquote(user), False):
            found.append((match.start("user"), match.end("user"), unquote(user), True))
    return found
