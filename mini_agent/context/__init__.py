"""Context engineering: what the model is shown beside the conversation, and how the conversation is kept
inside the window.

    blocks.py          ContextBlock (P0/P1/P2, TTL), Source, Enricher, TurnInput, fit(), the sent-blocks ledger
    sources.py         project instructions, environment, user memory, recent activity (git_state.py: git)
    attach.py          piped input, capped and escaped, for the stdin block
    enrich/            @path mentions, relative times (EN/ZH), references to earlier files, URLs
    gather.py          sources and enrichers run side by side with timeouts; the TTL cache and invalidation
    injection.py       per turn: gather -> fit -> send what is new or changed; the turn trace
    tokens.py          tiktoken (offline) with a character fallback; conversation size anchored on usage
    keeper.py          opens each turn, measures before each request, starts compaction
    trim.py            stubs and cuts the compactor applies before summarising
    summary_prompt.py  what the summariser is asked
    instructions.py    the user's explicit instructions, and the check that a summary kept them
    xmltext.py         escaping for text put inside tags

May import: the model package (usage, messages), tools.base, and the core's vocabulary (errors, events,
settings, session, prompt); keeper.py also drives compaction.py. Never ui/ or cli. Importing this package
imports nothing.
"""
