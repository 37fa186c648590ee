"""Endpoint families: the presets a user names with `--provider`, and which family a base URL belongs to.

A family decides where the context window and (for servers that host one model of the user's choosing) the model
id are looked up, and what the endpoint accepts back in a transcript.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlparse


@dataclass(frozen=True)
class Preset:
    base_url: str
    model: str | None
    """None: the server hosts models of the user's choosing; the first id its models list gives is used."""
    key_variable: str
    bearer: bool = False
    """Send the key as a bearer token (gateways). The SDK's 2.x sends either kind as `Authorization: Bearer`."""
    placeholder_key: str | None = None
    """Local servers accept any key: this one is used when the variable is unset."""


PRESETS: dict[str, Preset] = {
    "anthropic": Preset("https://api.anthropic.com", "claude-sonnet-5-5", "ANTHROPIC_API_KEY"),
    "deepseek": Preset("https://api.deepseek.com/anthropic", "deepseek-v4-pro", "DEEPSEEK_API_KEY"),
    "ollama": Preset("http://localhost:11434", "qwen3-coder", "OLLAMA_API_KEY", placeholder_key="ollama"),
    "vllm": Preset("http://localhost:8000", None, "VLLM_API_KEY", placeholder_key="EMPTY"),
    "llamacpp": Preset("http://localhost:8080", None, "LLAMA_API_KEY", placeholder_key="none"),
    "litellm": Preset("http://localhost:4000", None, "LITELLM_API_KEY", bearer=True),
    "openrouter": Preset("https://openrouter.ai/api", "anthropic/claude-sonnet-5.5", "OPENROUTER_API_KEY", True),
    # Providers that document an Anthropic-compatible endpoint (docs/endpoints.md cites each page); a `-cn` name is
    # the same provider's mainland-China endpoint, whose keys are issued separately.
    "moonshot": Preset("https://api.moonshot.ai/anthropic", "kimi-k2.6", "MOONSHOT_API_KEY"),
    "moonshot-cn": Preset("https://api.moonshot.cn/anthropic", "kimi-k2.6", "MOONSHOT_API_KEY"),
    "zai": Preset("https://api.z.ai/api/anthropic", "glm-5.3", "ZAI_API_KEY"),
    "zhipu": Preset("https://open.bigmodel.cn/api/anthropic", "glm-5.3", "ZHIPUAI_API_KEY"),
    "qwen": Preset("https://dashscope-intl.aliyuncs.com/apps/anthropic", "qwen3.5-plus", "DASHSCOPE_API_KEY"),
    "qwen-cn": Preset("https://dashscope.aliyuncs.com/apps/anthropic", "qwen3.5-plus", "DASHSCOPE_API_KEY"),
    "minimax": Preset("https://api.minimax.io/anthropic", "MiniMax-M3", "MINIMAX_API_KEY"),
    "minimax-cn": Preset("https://api.minimaxi.com/anthropic", "MiniMax-M2.7", "MINIMAX_API_KEY"),
    "lmstudio": Preset("http://localhost:1234", None, "LM_API_TOKEN", placeholder_key="lmstudio"),
}

FAMILIES = (*PRESETS, "compatible")
"""`compatible`: an endpoint of unknown make, probed for every family's window source."""

_HOSTS = {
    "api.anthropic.com": "anthropic",
    "api.deepseek.com": "deepseek",
    "openrouter.ai": "openrouter",
    **{host: name for name, preset in PRESETS.items() if (host := urlparse(preset.base_url).hostname) != "localhost"},
}


def family_of(base_url: str, provider: str | None = None) -> str:
    """The family of an endpoint: the preset it came from, else what its host says, else `compatible`."""
    if provider in PRESETS:
        return provider
    host = (urlparse(base_url).hostname or "").lower()
    return _HOSTS.get(host, "compatible")


def accepts_unknown_blocks(family: str) -> bool:
    """Whether block types this program does not know may go back to the endpoint as they came.

    Anthropic's own API sends new block types first and expects them back verbatim; a compatible server that
    sends something odd does not understand it back, and rejects the whole request.
    """
    return family == "anthropic"


def wants_thinking_back(family: str) -> bool:
    """Whether thinking blocks go back even without a signature: DeepSeek's thinking mode (its default) rejects
    a turn with tool calls whose thinking was left out, and MiniMax's Anthropic API page asks for the whole reply
    (thinking included) back to keep its chain of thought; elsewhere an unsigned thinking block is rejected."""
    return family in ("deepseek", "minimax", "minimax-cn")


CLAUDE_MODEL_ALIASES = {"sonnet": "claude-sonnet-5-5", "opus": "claude-opus-5-5", "haiku": "claude-haiku-5-5"}
"""The model names Claude Code's agent files use, as the newest model of each kind."""


def model_for_agent(written: str, main: str) -> str:
    """The model an agent file's `model:` means beside the main model: `inherit` is the main model; `sonnet`,
    `opus` and `haiku` are Claude Code's names, meant for Anthropic's ids, so on an endpoint whose models are
    named otherwise (the main model is not a `claude-` id) the agent uses the main model; any other name as
    written."""
    if written == "inherit":
        return main
    alias = CLAUDE_MODEL_ALIASES.get(written.lower())
    if alias is None:
        return written
    return alias if main.startswith("claude-") else main


def connect_advice(base_url: str, provider: str | None) -> str:
    """What to check when `base_url` cannot be reached: the preset's server when the address is the preset's own
    (the user never typed it), else the setting that chose it."""
    preset = PRESETS.get(provider or "")
    if preset is not None and base_url.rstrip("/") == preset.base_url.rstrip("/"):
        server = SERVER_NAMES.get(provider or "", f"the {provider} server")
        return f"Is {server} running there? --provider {provider} uses it; --base-url changes it."
    return "Check --base-url / ANTHROPIC_BASE_URL."


SERVER_NAMES = {
    "vllm": "vLLM",
    "llamacpp": "llama.cpp's server",
    "litellm": "the LiteLLM proxy",
    "ollama": "Ollama",
    "lmstudio": "LM Studio's server",
}


def answers(base_url: str, timeout: float = 1.0) -> bool:
    """Whether anything accepts a connection at the URL's host and port (a local server that is not running
    refuses at once)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "localhost", port), timeout=timeout):
            return True
    except OSError:
        return False
