"""MCP servers as tool providers: their definitions (config.toml, .mcp.json) and the trust question they need,
connections through the official `mcp` SDK on one background event loop, their tools as registry tools named
`mcp__<server>__<tool>`, their resources (two tools) and prompts (slash commands), and the manager that starts
them, reconnects them and reports their status.

May import: model, hooks, events, xmltext (hints), settings, config_files, trust, tools.base (Tool, ToolError,
truncation), processes (its stdio servers; the login's browser), safety, files (the token file's locked writes).
Never ui/, cli, the agent or context/. The `mcp` SDK (slow to import) is imported only by connection.py (on
event_loop.py's one loop) and the OAuth modules (oauth.py, oauth_store.py, oauth_login.py: a remote server's
login), and only once a server is about to start.
"""
