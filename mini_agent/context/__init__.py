"""Context engineering: what the model is shown beside the conversation, and how the conversation is kept
inside the window.

    blocks.py          ContextBlock (P0/P1/P2, TTL), Source, Enricher, TurnInput, fit(), the sent-blocks ledger
    sources.py         project instructions, environment, user memory, recent activity (git_state.py: git)
    instruction_files.py  where AGENTS.md, CLAUDE.md and CLAUDE.local.md are; imports.py: their @path imports;
                       instruction_text.py: the block's text; instruction_trust.py: what the agent wrote there
    skill_trust.py     where skill folders are and which a session changed (withheld until the human trusts them)
    attach.py          piped input, capped and escaped, for the stdin block
    images.py          images the user attaches (`@shot.png`, a dragged path, `--image`): blocks beside the text
    enrich/            @path mentions, relative times (EN/ZH), references to earlier files, URLs
    gather.py          sources and enrichers run side by side with timeouts; the TTL cache and invalidation
    injection.py       per turn: gather -> fit -> send what is new or changed; the turn trace
    reports.py         the events it emits (ContextInjected, ImagesAttached), light enough for a front end to import
    tokens.py          tiktoken (offline) with a character fallback; conversation size anchored on usage
    keeper.py          opens each turn, measures before each request, starts compaction
    compaction.py      the staged compaction: cheapest stage first, re-measuring after each
    trim.py            stubs and cuts the compactor applies before summarising
    summary_prompt.py  what the summariser is asked

May import what sits below it: conversation, instructions, mcp, model (the summariser's requests), tools.base,
and the core's vocabulary (errors, events, settings, usage, prompt, xmltext). Never the agent, tool_calls, ui/,
app/ or cli/. Importing this package imports nothing.
"""
