"""Everything that touches the terminal: renderers, the interactive loop, confirmation.

    launch.py            wiring for a run (agent, keeper, session file, undo)
    oneshot.py           -p runs: text, json and stream-json output
    interactive.py       the REPL (agent_build.py: its agent built behind the first prompt; repl_input.py,
                         slash.py, repl_commands.py, lifecycle.py, context_view.py)
    console.py           REPL output (markdown_stream.py, markdown_blocks.py, render.py, trace.py)
    confirm.py           the only code that asks the human
    *_view.py            what the inspecting subcommands print; show_prompt.py
    terminal_text.py     the terminal chokepoint: model/tool/file/command text shown, never interpreted

May import anything below it; only cli imports ui.
"""
