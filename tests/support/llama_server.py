"""A real llama.cpp `llama-server` for the tests, and a tiny random-weights model for it to serve.

No build and no system change: Debian sid packages the server (`llama.cpp-tools`), but for a newer C library than
the Debian releases the tests run on. So the packages are fetched with `apt-get download` through a private apt
state (sid's package lists never touch the system's), unpacked with `dpkg-deb -x` under the user's cache, and
the server is run by sid's own dynamic loader with `--library-path` pointing into the unpacked tree. ggml looks
for its CPU backend in the working directory, so the server runs in `ggml/backends0`.

The package versions are pinned (PACKAGES) so that sid moving on does not change what the tests run against
without anyone noticing; a pinned version the mirror no longer has is replaced by the current one, with a
warning. The unpacked tree is kept in `~/.cache/mini-agent-tests/llama-server/<version>/` (not under /tmp, which
the sandbox tests hide) and reused by later runs.

Where apt-get or dpkg-deb are missing, or the mirror cannot be reached, the tests skip and say why; with
MINI_AGENT_REQUIRE_LLAMA_SERVER=1 (for CI) they fail instead. MINI_AGENT_TEST_DEBIAN_MIRROR names another mirror.

The model is written with the `gguf` package: a two-layer llama with random weights and a SentencePiece vocabulary
of control tokens, the 256 byte-fallback tokens and a few word pieces. It writes gibberish made of single bytes,
so its tokens often end inside a UTF-8 character, which is what makes llama-server leave out `message_start`.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = {
    "llama.cpp-tools": "1:0.7.0+dfsg-2",  # llama-server 0.7.0, upstream build 11669
    "libllama0": "1:0.7.0+dfsg-2",
    "libggml0": "0.27.0-1",
    "libc6": "2.43-7",  # sid's C library and dynamic loader: bookworm's 2.36 is too old for the server
    "libstdc++6": "16.2.0-4",
    "libgcc-s1": "16.2.0-4",
    "libgomp1": "16.2.0-4",
    "libssl3t64": "3.6.5-1",
    "zlib1g": "1:1.3.dfsg+really1.3.2-4",  # libcrypto's own needs, so nothing is taken from the host
    "libzstd1": "1.5.7+dfsg-4",
}
"""Debian sid (amd64) packages the server needs to run, at the versions these tests were written against."""

MIRROR = os.environ.get("MINI_AGENT_TEST_DEBIAN_MIRROR", "http://deb.debian.org/debian")
CACHE = Path.home() / ".cache" / "mini-agent-tests" / "llama-server"
MULTIARCH = "x86_64-linux-gnu"
LOADER = "ld-linux-x86-64.so.2"
REQUIRED = os.environ.get("MINI_AGENT_REQUIRE_LLAMA_SERVER") == "1"
"""Set on machines where the server must run (CI): a missing server fails the tests instead of skipping them."""

APT_TIMEOUT = 600


class Unavailable(Exception):
    """llama-server cannot be had on this machine; the message says why."""


@dataclass
class Tree:
    """An unpacked llama-server: the sid root, the versions it holds, and what had to change from the pins."""

    path: Path
    versions: dict[str, str]
    fallbacks: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds spent this run: `apt-get update`, `download`, `unpack` (empty when the cache served it)."""

    @property
    def libs(self) -> Path:
        return self.path / "root" / "usr" / "lib" / MULTIARCH

    def command(self) -> list[str]:
        libs = self.libs
        return [
            str(libs / LOADER),
            "--library-path",
            f"{libs}:{libs / 'llama'}",
            str(self.path / "root/usr/bin/llama-server"),
        ]


# ---- obtaining the server ------------------------------------------------------------------------------------


def obtain(cache: Path = CACHE) -> Tree:
    """The unpacked server, from the cache or fetched now; Unavailable when this machine cannot have it."""
    _check_platform()
    pinned = cache / _dirname(PACKAGES["llama.cpp-tools"])
    if _complete(pinned):
        return _load(pinned)
    missing = [tool for tool in ("apt-get", "apt-cache", "dpkg-deb") if shutil.which(tool) is None]
    if missing:
        raise Unavailable(f"no Debian package tools on this machine ({', '.join(missing)} not on PATH)")
    cache.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(dir=cache, prefix=".fetch-") as scratch:
        work = Path(scratch)
        config = _apt_config(work)
        started = time.monotonic()
        _run(["apt-get", "-c", str(config), "-q", "update"], "apt-get update of Debian sid", work)
        timings["apt-get update"] = time.monotonic() - started
        versions, fallbacks = _resolve(config, work)
        target = cache / _dirname(versions["llama.cpp-tools"], versions if fallbacks else None)
        if _complete(target):
            return _load(target)
        debs = work / "debs"
        debs.mkdir()
        started = time.monotonic()
        wanted = [f"{name}={version}" for name, version in versions.items()]
        _run(["apt-get", "-c", str(config), "-q", "download", *wanted], "apt-get download", debs)
        timings["download"] = time.monotonic() - started
        started = time.monotonic()
        tree = work / "tree"
        (tree / "root").mkdir(parents=True)
        for deb in sorted(debs.glob("*.deb")):  # a package that downloaded but does not unpack is a failure
            _run(["dpkg-deb", "-x", str(deb), str(tree / "root")], f"dpkg-deb -x {deb.name}", work, RuntimeError)
        timings["unpack"] = time.monotonic() - started
        manifest = {
            "versions": versions,
            "fallbacks": fallbacks,
            "mirror": MIRROR,
            "fetched": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "sha256": {deb.name: hashlib.sha256(deb.read_bytes()).hexdigest() for deb in sorted(debs.glob("*.deb"))},
        }
        (tree / "versions.json").write_text(json.dumps(manifest, indent=2) + "\n")
        try:
            tree.rename(target)  # atomic: a tree in place is a whole one
        except OSError:
            if not _complete(target):  # not another run that got there first
                raise
    loaded = _load(target)
    loaded.timings = timings
    return loaded


def _check_platform() -> None:
    if sys.platform != "linux":
        raise Unavailable(f"llama-server comes from Debian packages, which need Linux, not {sys.platform}")
    if platform.machine() != "x86_64":
        raise Unavailable(f"the pinned Debian packages are amd64 builds; this machine is {platform.machine()}")


def _dirname(version: str, changed: dict[str, str] | None = None) -> str:
    """`0.7.0+dfsg-2` (the epoch left out); with versions other than the pins, a digest of them all is added."""
    name = version.split(":", 1)[-1]
    if changed:
        name += "~" + hashlib.sha256(json.dumps(changed, sort_keys=True).encode()).hexdigest()[:8]
    return name


def _complete(path: Path) -> bool:
    return (path / "versions.json").is_file() and (path / "root" / "usr" / "bin" / "llama-server").is_file()


def _load(path: Path) -> Tree:
    manifest = json.loads((path / "versions.json").read_text())
    return Tree(path, manifest["versions"], manifest.get("fallbacks", []))


def _apt_config(work: Path) -> Path:
    """A private apt state: sid's lists, cache and sources live in `work`; the host's network settings still apply.

    Update hooks of the host (`APT::Update::Post-Invoke*`) are cleared: this update is not the system's.
    """
    state = work / "apt"
    for sub in ("lists/partial", "cache/archives/partial", "etc"):
        (state / sub).mkdir(parents=True)
    (state / "status").touch()
    (state / "etc" / "sources.list").write_text(f"deb {MIRROR} sid main\n")
    lines = [
        f'Dir::State "{state}";',
        f'Dir::State::Lists "{state}/lists";',
        f'Dir::State::status "{state}/status";',
        f'Dir::Cache "{state}/cache";',
        f'Dir::Etc::sourcelist "{state}/etc/sources.list";',
        f'Dir::Etc::sourceparts "{state}/etc/sources.list.d";',
        f'Dir::Etc::preferences "{state}/etc/preferences";',
        f'Dir::Etc::preferencesparts "{state}/etc/preferences.d";',
        'APT::Architecture "amd64";',
        'APT::Architectures { "amd64"; };',
        'APT::Update::Error-Mode "any";',  # a source that cannot be fetched fails the update (apt >= 2.1)
        "#clear APT::Update::Post-Invoke;",
        "#clear APT::Update::Post-Invoke-Success;",
        "#clear APT::Update::Pre-Invoke;",
    ]
    if os.geteuid() == 0:
        lines.append('APT::Sandbox::User "root";')  # `_apt` could not write into root's cache
    config = state / "apt.conf"
    config.write_text("\n".join(lines) + "\n")
    return config


def _resolve(config: Path, work: Path) -> tuple[dict[str, str], list[str]]:
    """The version of each package to fetch: the pin when sid still has it, else sid's current one."""
    listed = _run(["apt-cache", "-c", str(config), "madison", *PACKAGES], "apt-cache madison", work)
    available: dict[str, list[str]] = {}
    for line in listed.splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) >= 3:
            available.setdefault(cells[0], []).append(cells[1])
    versions, fallbacks = {}, []
    for name, pinned in PACKAGES.items():
        offered = available.get(name, [])
        if pinned in offered:
            versions[name] = pinned
        elif offered:
            versions[name] = offered[0]
            fallbacks.append(f"{name} {pinned} is gone from {MIRROR} sid; using {offered[0]}")
        else:
            raise Unavailable(f"Debian sid at {MIRROR} has no package {name}")
    return versions, fallbacks


def _run(argv: list[str], what: str, cwd: Path, error: type[Exception] = Unavailable) -> str:
    try:
        done = subprocess.run(
            argv, cwd=cwd, capture_output=True, text=True, timeout=APT_TIMEOUT, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise error(f"{what} failed: {exc}") from None
    if done.returncode != 0:
        tail = (done.stderr.strip() or done.stdout.strip())[-800:]
        raise error(f"{what} failed (exit {done.returncode}): {tail}")
    return done.stdout


# ---- the model -----------------------------------------------------------------------------------------------

WORD_PIECES = ["\u2581", "\u2581the", "\u2581a", "\u2581hello", "\u2581world", "\u2581user", "\u2581assistant"]
WORD_PIECES += ["\u2581system", "\u2581is", "\u2581to", "\u2581of", *map(chr, range(ord("a"), ord("z") + 1))]
WORD_PIECES += ["user", "assistant", "system", "\n"]
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def make_tiny_gguf(path: Path, context_length: int = 65_536, seed: int = 0) -> Path:
    """Write a llama-architecture GGUF of random weights (2 layers, 64 wide, F32, ~0.5 MB) that llama-server serves.

    `context_length` is the trained context the file claims: llama-server caps `-c` to it.
    """
    import gguf
    import numpy as np

    rng = np.random.default_rng(seed)
    kinds = gguf.TokenType
    tokens: list[str] = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
    types = [kinds.UNKNOWN, kinds.CONTROL, kinds.CONTROL, kinds.CONTROL, kinds.CONTROL]
    tokens += [f"<0x{byte:02X}>" for byte in range(256)]
    types += [kinds.BYTE] * 256
    tokens += WORD_PIECES
    types += [kinds.NORMAL] * len(WORD_PIECES)
    scores = [0.0] * (len(tokens) - len(WORD_PIECES)) + [-float(i + 1) for i in range(len(WORD_PIECES))]
    n_vocab, n_embd, n_head, n_layer, n_ff = len(tokens), 64, 4, 2, 128

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny-random-llama")
    writer.add_context_length(context_length)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head)
    writer.add_rope_dimension_count(n_embd // n_head)
    writer.add_rope_freq_base(10_000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(4)  # <|im_end|> ends a reply
    writer.add_unk_token_id(0)
    writer.add_add_bos_token(False)
    writer.add_add_eos_token(False)
    writer.add_chat_template(CHATML)

    def random(name: str, *shape: int) -> None:  # numpy (rows, cols); the writer stores GGUF's reversed order
        writer.add_tensor(name, (rng.standard_normal(shape) * 0.02).astype(np.float32))

    def ones(name: str) -> None:
        writer.add_tensor(name, np.ones(n_embd, dtype=np.float32))

    random("token_embd.weight", n_vocab, n_embd)
    ones("output_norm.weight")
    random("output.weight", n_vocab, n_embd)
    for i in range(n_layer):
        ones(f"blk.{i}.attn_norm.weight")
        for part in ("q", "k", "v", "output"):
            random(f"blk.{i}.attn_{part}.weight", n_embd, n_embd)
        ones(f"blk.{i}.ffn_norm.weight")
        random(f"blk.{i}.ffn_gate.weight", n_ff, n_embd)
        random(f"blk.{i}.ffn_up.weight", n_ff, n_embd)
        random(f"blk.{i}.ffn_down.weight", n_embd, n_ff)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


# ---- running it ----------------------------------------------------------------------------------------------

SAMPLING = ["--seed", "7", "--temp", "1.5", "--logit-bias", "4+1.5"]
"""Every request samples from one fixed seed, so a prompt always gets the same reply; token 4 (`<|im_end|>`) is
favoured so that replies end after a few tokens instead of running to the output limit (a random model rarely
picks it otherwise). The bias must stay below ~3: min_p (0.05 of the top token) would leave only `<|im_end|>`."""


class LlamaServer:
    """One llama-server process in its own process group, on a free loopback port, logging to a file."""

    def __init__(self, tree: Tree, model: Path, ctx: int, log: Path, extra: tuple[str, ...] = ()) -> None:
        self.tree, self.model, self.ctx, self.log, self.extra = tree, model, ctx, log, extra
        self.process: subprocess.Popen | None = None
        self.port = 0
        self.startup = 0.0
        """Seconds from spawning the process to the first healthy answer."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> LlamaServer:
        for _ in range(3):  # the free port may be taken between choosing it and the server binding it
            self.port = _free_port()
            started = time.monotonic()
            self._spawn()
            if self._wait_healthy(started + timeout):
                self.startup = time.monotonic() - started
                return self
            if self.process is not None and self.process.poll() is None:
                self.stop()
                raise RuntimeError(f"llama-server did not become healthy in {timeout:.0f} s:\n{self.log_tail()}")
        raise RuntimeError(f"llama-server exited at start three times:\n{self.log_tail()}")

    def _spawn(self) -> None:
        argv = [
            *self.tree.command(),
            *("-m", str(self.model), "--host", "127.0.0.1", "--port", str(self.port)),
            *("-c", str(self.ctx), "-np", "1", "--no-webui", "--log-colors", "off"),
            # One thread that sleeps when idle: a model this small gains nothing from a second, and the suite's
            # other worker needs the core (two polling threads cost ~6 s of CPU over the module).
            *("-t", "1", "-tb", "1", "--poll", "0"),
            *SAMPLING,
            *self.extra,
        ]
        # The server reads LLAMA_ARG_* variables as arguments: none of the developer's may change the tests.
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("LLAMA_", "GGML_", "HF_"))}
        with open(self.log, "ab") as log:
            log.write(f"$ {' '.join(argv)}\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                argv,
                cwd=self.tree.libs / "ggml" / "backends0",  # where ggml finds its CPU backend
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment,
                start_new_session=True,  # its own process group, killed whole at the end
                preexec_fn=_die_with_parent,
            )

    def _wait_healthy(self, deadline: float) -> bool:
        import httpx

        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                return False
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        """Terminate the server's process group, then kill it if it lingers."""
        process = self.process
        if process is None or process.poll() is not None:
            return  # exited (and reaped): its group id may belong to someone else by now
        group = os.getpgid(process.pid)
        if group <= 1 or group != process.pid:
            process.kill()
        else:
            os.killpg(group, signal.SIGTERM)
            try:
                process.wait(5)
                return
            except subprocess.TimeoutExpired:
                os.killpg(group, signal.SIGKILL)
        process.wait(5)

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError as exc:
            return f"(no log: {exc})"


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the test process dies, so a killed run leaves no server behind."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def warn_fallbacks(tree: Tree) -> None:
    for text in tree.fallbacks:
        warnings.warn(f"llama-server test tree: {text}", stacklevel=2)


RUNNING: list[LlamaServer] = []
"""Servers started for the tests; a failed test's report shows their logs (conftest.py)."""
