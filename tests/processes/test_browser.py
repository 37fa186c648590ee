"""The human's browser on a login page (processes/browser.py): a real child started through `webbrowser`'s
controller, without the agent's credentials, and only for an http(s) page."""

from __future__ import annotations

import json
import sys
import webbrowser

from support import eventually


def test_the_browser_gets_the_page_but_not_the_agent_s_key(tmp_path, monkeypatch):
    from mini_agent.processes.browser import open_page

    seen = tmp_path / "seen.json"
    script = tmp_path / "browser.py"
    script.write_text(
        "import json, os, sys\n"
        f"open({str(seen)!r} + '.tmp', 'w').write(json.dumps({{'argv': sys.argv[1:], 'env': dict(os.environ)}}))\n"
        f"os.replace({str(seen)!r} + '.tmp', {str(seen)!r})\n"
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-BROWSER-MUST-NOT-SEE")
    monkeypatch.setenv("SOME_SETTING", "kept")
    browser = webbrowser.BackgroundBrowser([sys.executable, str(script), "%s"])
    assert open_page("https://auth.example.com/authorize?state=x", browser)
    record = json.loads(eventually(lambda: seen.exists() and seen.read_text(), "the browser started"))
    assert record["argv"] == ["https://auth.example.com/authorize?state=x"]
    assert "ANTHROPIC_API_KEY" not in record["env"] and record["env"]["SOME_SETTING"] == "kept"

    for url in ("javascript:alert(1)", "file:///etc/passwd", "data:text/html,x"):
        assert not open_page(url, browser)
