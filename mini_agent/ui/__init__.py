"""Drawing only: everything that writes to the terminal, and the one question that asks the human.

    console.py           REPL output for a turn (markdown_stream.py, markdown_blocks.py, markdown_look.py,
                         markdown_text.py + line_breaks.py: the layout of paragraphs, list items, cut code;
                         tool_line.py, event_lines.py, status_line.py, trace.py; no event class before an event)
    render.py            the core's events as text for a terminal, a log, or a script (text, json, stream-json;
                         claude_shapes.py: the records Claude Code's stream-json also has, in its shapes)
    confirm.py           the only code that asks the human (approval_view.py, keys.py; plan_review.py: a plan
                         to approve); trust_question.py
    repl_input.py        the REPL's input line (prompt-toolkit)
    *_view.py            what slash commands and inspecting subcommands print (todo_view.py: the todo list)
    terminal_text.py     the terminal chokepoint: model/tool/file/command text shown, never interpreted

May import the layers below it (context, conversation, tools, model, safety, ...); the agent's
result types; never app or cli. Nothing below ui imports it.
"""
