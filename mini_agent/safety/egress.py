"""Which secret a tool call would send out: the check the gate applies after the policy.

A web_fetch URL is searched for every known secret in every encoding (and once more percent-decoded), and so
are the URL's query values, path segments and host labels joined together (a secret split across them). An MCP
tool's arguments go to its server: every string in them, at any depth (keys too), is searched the same way, and
so is all their text joined (a secret split across arguments). A bash command counts as sending when it may
touch the network (curl, wget, nc, ssh, git push, dig, getent and the other name resolvers, an interpreter with
network code, `/dev/tcp`, ... anywhere in the line, inside `bash -c` strings too) and it carries a secret: a known
value in any encoding, a secret-named variable (`$FOO_TOKEN`, `${AWS_SECRET_ACCESS_KEY}`, `printenv X_TOKEN`),
a dump of the whole environment (`env`, `/proc/self/environ`), or a likely secret file (`curl -d @.env`,
`$(cat ~/.ssh/id_rsa)`, `source .env`). The whole line is judged, not one argument: data flows through pipes,
variables and substitutions. Such a call asks in every mode but bypass, whatever the rules allow.

This works on the command text alone, so it holds whether or not the command later runs in a sandbox.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, unquote_plus, urlsplit

from mini_agent.safety.credential_places import SECRET_NAME
from mini_agent.safety.mcp_policy import is_mcp
from mini_agent.safety.permissions import Allow, Ask, Deny, Verdict
from mini_agent.safety.rules import BASH, WEB_FETCH
from mini_agent.safety.secrets import SecretSet
from mini_agent.safety.workspace import secret_reason

RESOLVERS = frozenset(
    "dig nslookup host drill kdig delv getent resolvectl systemd-resolve avahi-resolve avahi-resolve-host-name "
    "avahi-resolve-address avahi-browse adnshost".split()
)
"""Name lookups reach the network too: the name asked for (`$(cat .env | base32).evil.example`) is the message."""
NETWORK_COMMANDS = RESOLVERS | frozenset(
    "curl wget nc ncat netcat socat telnet ssh scp sftp rsync ftp tftp lftp http https httpie xh whois ping ping6 "
    "traceroute tracepath mtr arping nmap openssl aria2c gh aws gcloud gsutil az mail mailx sendmail mutt "
    "smbclient s3cmd rclone websocat grpcurl".split()
)
INTERPRETERS = frozenset("python python2 python3 node nodejs deno bun perl ruby php lua pwsh".split())
GIT_NETWORK = frozenset("push clone fetch pull remote ls-remote submodule send-email".split())
NETWORK_CODE = re.compile(
    r"urllib|requests|http\.client|httpx|aiohttp|socket|urlopen|fetch\s*\(|XMLHttpRequest|net/http|Net::HTTP|"
    r"LWP|IO::Socket|open-uri|smtplib|ftplib|paramiko|websocket|https?://",
    re.IGNORECASE,
)
# Words that start a command: after a separator, a quote (code in `bash -c "..."`), `$(`, or a keyword.
_TOKEN = re.compile(r"[^\s;&|(){}<>`\"'=]+")
_STARTS = set(";&|(){}`\"'=!\n")
_KEYWORDS = frozenset("do then else elif if while until time ! exec".split())
_WRAPPERS = frozenset(
    "sudo env timeout nice nohup command builtin stdbuf xargs watch strace ionice chroot unbuffer flock parallel "
    "doas su -exec -execdir".split()
)
_VARIABLE = re.compile(r"\$\{?[#!]?([A-Za-z_][A-Za-z0-9_]*)")
_ENV_READ = re.compile(r"(?:printenv|getenv|environ(?:\.get)?|process\.env|ENV)\W{0,3}([A-Za-z_][A-Za-z0-9_]*)")
_ENV_DUMP = re.compile(
    r"(?:^|[;&|(`{]|\$\()\s*(?:env|printenv|set|export\s+-p|declare\s+-\w*[px]\w*)\s*(?=$|[;&|)`}>])"
    r"|/proc/[^/\s]+/environ|\bos\.environ\b(?!\s*(?:\[|\.get))|\bprocess\.env\b(?!\s*[.\[])|%ENV\b",
    re.MULTILINE,
)
_DESTINATION = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'`;|&)]+|[\w.-]+@[\w.-]+(?=:)")


def guard(verdict: Verdict, tool: str, arguments: dict, secrets: SecretSet) -> Verdict:
    """The policy's verdict, turned into a question when the call would send a secret (a deny stays a deny)."""
    if isinstance(verdict, Deny):
        return verdict
    reason = outgoing(tool, arguments, secrets)
    if reason is None:
        return verdict
    if isinstance(verdict, Allow):
        return Ask(reason, "sensitive")
    risk = "destructive" if verdict.risk == "destructive" else "sensitive"
    return Ask(f"{reason}; {verdict.reason}", risk, (), verdict.classification)


def outgoing(tool: str, arguments: dict, secrets: SecretSet) -> str | None:
    """What secret the call would send and where ("sends the value of FOO_TOKEN (ab…yz) to example.com"), or None."""
    if tool == WEB_FETCH:
        return _fetch(str(arguments.get("url", "")), secrets)
    if tool == BASH:
        return _command(str(arguments.get("command", "")), secrets)
    if is_mcp(tool):
        return _mcp(tool, arguments, secrets)
    return None


def _fetch(url: str, secrets: SecretSet) -> str | None:
    found = _known(url, secrets) or _known(_url_pieces_joined(url), secrets)
    if not found:
        return None
    try:
        host = urlsplit(url.strip()).hostname or url
    except ValueError:
        host = url
    return f"sends {found} to {host}"


def _url_pieces_joined(url: str) -> str:
    """The URL's query values, path segments and host labels, each kind joined without separators: a secret
    split across `?a=...&b=...`, `/.../...` or `....evil.example` is whole again."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
    except ValueError:
        return ""
    values = [value for _, _, value in (pair.partition("=") for pair in re.split(r"[&;]", parts.query))]
    return "\n".join(("".join(values), "".join(parts.path.split("/")), "".join(host.split(".")), parts.fragment))


def _mcp(tool: str, arguments: dict, secrets: SecretSet) -> str | None:
    server = tool.split("__")[1] if tool.count("__") >= 2 else tool
    where = f"the MCP server {server} would receive it"
    strings = list(_strings(arguments, ""))
    for path, text, _ in strings:
        found = _known(text, secrets)
        if found:
            return f"the argument {secrets.mask(path) or '(top level)'} contains {found}, shown as **** here: {where}"
    joined = _known("".join(text for _, text, key in strings if not key), secrets)
    if joined:
        return f"the arguments joined together contain {joined}, shown as **** here: {where}"
    return None


def _strings(value: object, path: str):
    """(where, text, is a key) for every string in a JSON-like value: keys and values, at any depth."""
    if isinstance(value, str):
        yield path, value, False
    elif isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            if isinstance(key, str):
                yield child, key, True
            yield from _strings(item, child)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}[{index}]")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield path, str(value), False  # a secret of digits (a PIN, an account number) sent as a number


def _known(text: str, secrets: SecretSet) -> str | None:
    """The first known secret in the text, in any encoding, as a human reads it."""
    if not text:
        return None
    once = unquote(text)
    for form in dict.fromkeys((text, once, unquote_plus(text), unquote(once))):
        hits = secrets.find(form)
        if hits:
            hit = hits[0]
            how = "" if hit.encoding == "raw" else f", {hit.encoding}"
            return f"{hit.secret.described()}{how}"
    return None


def _command(command: str, secrets: SecretSet) -> str | None:
    tool = network_command(command)
    if tool is None:
        return None
    what = _known(command, secrets) or _secret_variable(command, secrets) or _secret_file(command)
    if what is None and _ENV_DUMP.search(command):
        what = "the whole environment (with every secret variable)"
    if what is None:
        return None
    destination = _DESTINATION.search(command)
    where = f"to {_host(destination.group())}" if destination else f"over the network ({tool})"
    return f"sends {what} {where}"


def network_command(command: str) -> str | None:
    """The first command of the line that may touch the network, or None."""
    wrapped = False
    previous_end = 0
    for match in _TOKEN.finditer(command):
        between = command[previous_end : match.start()]
        previous_end = match.end()
        word = match.group()
        name = word.rsplit("/", 1)[-1]
        if any(char in between for char in ";&|\n"):
            wrapped = False  # a new command: a wrapper's reach ends
        starts = wrapped or not command[: match.start()].strip() or any(char in _STARTS for char in between)
        starts = starts or "$(" in between or previous_word_is_keyword(command, match.start())
        if "/dev/tcp/" in word or "/dev/udp/" in word:
            return word
        if not starts:
            continue
        if name in _WRAPPERS:
            wrapped = True
        if name in NETWORK_COMMANDS:
            return name
        if name == "git" and GIT_NETWORK & set(_TOKEN.findall(command[match.end() :])):
            return "git"
        if name in INTERPRETERS and NETWORK_CODE.search(command):
            return name
    return None


def previous_word_is_keyword(command: str, position: int) -> bool:
    before = command[:position].rstrip().rsplit(None, 1)
    return bool(before) and before[-1] in _KEYWORDS


def _secret_variable(command: str, secrets: SecretSet) -> str | None:
    for name in [*_VARIABLE.findall(command), *_ENV_READ.findall(command)]:
        known = secrets.named(name)
        if known is not None:
            return known.described()
        if SECRET_NAME.search(name):
            return f"the value of {name}"
    return None


def _secret_file(command: str) -> str | None:
    paths = secret_paths(command)
    return f"the contents of {paths[0]} (a likely secret file)" if paths else None


def secret_paths(command: str) -> list[str]:
    """Words of a command that name a likely secret file (`.env`, `@.env`, `~/.ssh/id_rsa`), as written."""
    found = []
    for word in _TOKEN.findall(command):
        path = word.lstrip("@<").removeprefix("file:")
        if "://" not in word and path and not path.startswith("-") and secret_reason(path) is not None:
            found.append(path)
    return found


def _host(destination: str) -> str:
    if "://" in destination:
        try:
            return urlsplit(destination).hostname or destination
        except ValueError:
            return destination
    return destination.rsplit("@", 1)[-1]
