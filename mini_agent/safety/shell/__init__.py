"""Shell-command classification for the permission policy: read-only, ordinary or destructive, part by part.

    from mini_agent.safety.shell import classify
    classify("git status && rm -rf ~", workspace).kind   # "destructive"

tree-sitter-bash is imported on the first call to `classify`, never when this package is imported. May import
what safety/ may.
"""

from mini_agent.safety.shell.classify import Classification, Part, classify
from mini_agent.safety.shell.verdict import Kind

__all__ = ["Classification", "Kind", "Part", "classify"]
