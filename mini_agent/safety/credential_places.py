"""Where credentials live: the one list behind read_file's policy, the shell classifier and the OS sandbox.

A place is one or more names under the home directory (`.ssh`, `.config/gh`, `.cargo/credentials.toml`): the
credential files and folders of common tools, shell and REPL histories (what was typed, passwords and tokens
included), and mini-agent's own data (sessions, the prompt history, trust decisions, caches). A path is in a
place when the place's names appear in it one after another, anywhere (another user's home or a copy inside a
project count too). Beside the places, names of files that hold secrets wherever they sit (`.env`, `*.pem`).

Reading a place needs a human's yes (read_file asks in every mode, a command naming one is destructive), and the
sandbox hides every place that exists under home from confined commands.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import PurePosixPath

KEYS = (".ssh", ".gnupg", ".password-store", ".local/share/keyrings")
CLOUD = (
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".oci",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/doctl",
    ".config/hcloud",
    ".config/rclone/rclone.conf",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    ".s3cfg",
    ".boto",
)
LOGINS = (
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".pgpass",
    ".my.cnf",
    ".mylogin.cnf",
    ".pypirc",
    ".npmrc",
    ".docker/config.json",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".gem/credentials",
    ".composer/auth.json",
    ".config/composer/auth.json",
    ".cache/huggingface/token",
    ".cache/huggingface/stored_tokens",
    ".huggingface/token",
)
HISTORIES = (
    ".bash_history",
    ".zsh_history",
    ".sh_history",
    ".histfile",
    ".local/share/fish/fish_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".node_repl_history",
    ".sqlite_history",
    ".rediscli_history",
    ".irb_history",
    ".lesshst",
)
AGENT_DATA = (".local/share/mini-agent", ".cache/mini-agent")
"""mini-agent's own data and cache at their default places; the configured ones (MINI_AGENT_HOME, XDG_DATA_HOME)
are passed in as `private` paths."""
PLACES = (*KEYS, *CLOUD, *LOGINS, *HISTORIES, *AGENT_DATA)
SANDBOX_VISIBLE = (".docker",)
"""Of `~/.docker` only the registry logins (config.json) are hidden, so docker's contexts stay usable."""
SANDBOX_HIDDEN = tuple(place for place in PLACES if place not in SANDBOX_VISIBLE)
HOME_ROOTS = frozenset(place for place in PLACES if "/" not in place)
"""First names under home that are credentials themselves (`.ssh`, `.netrc`), not folders that merely hold some
(`.config`, `.cargo`)."""

# Names of files that likely hold secrets wherever they are, as shell globs on the file name.
SECRET_NAME = re.compile(r"(_KEY|_TOKEN|_SECRET)$|PASSWORD|^(API_?KEY|TOKEN|SECRET)$", re.IGNORECASE)
"""An environment variable whose name says it holds a secret."""

SECRET_NAMES = (
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_*_sk",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".htpasswd",
    ".vault-token",
    "credentials",
    "credentials.json",
    "credentials.toml",
    "*credentials*.json",
    "credentials.tfrc.json",
    "service-account*.json",
    "secrets.yaml",
    "secrets.yml",
    "secrets.json",
    "*.tfvars",
    *(place for place in HISTORIES if "/" not in place),
)
NOT_SECRET = (".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults", "*.pub")
"""Templates that share a secret file's name but hold none."""

_PARTS = tuple((place, PurePosixPath(place).parts) for place in PLACES)


def place_of(path: object) -> str | None:
    """The credential place a path is in or is (`.ssh`, `.cargo/credentials.toml`), or None."""
    parts = PurePosixPath(str(path)).parts
    for place, names in _PARTS:
        size = len(names)
        if names[0] in parts and any(parts[index : index + size] == names for index in range(len(parts) - size + 1)):
            return place
    return None


def secret_name(name: str) -> bool:
    """Whether a file's name alone says it likely holds a secret (`.env`, `id_rsa`, `prod.tfvars`)."""
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in NOT_SECRET):
        return False
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in SECRET_NAMES)


def why(place: str) -> str:
    """What a place holds, for a reason shown to the human."""
    if place in HISTORIES:
        return "a history of what was typed (passwords and tokens included)"
    if place in AGENT_DATA:
        return "mini-agent's own data (sessions, the prompt history, trust decisions)"
    return "keys or credentials"
