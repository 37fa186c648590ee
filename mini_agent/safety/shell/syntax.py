"""The shell grammar: tree-sitter-bash turns a command line into the simple commands it would run.

Every simple command is found wherever it sits (lists, pipelines, subshells, groups, loop and branch bodies,
function bodies, `$(...)`, backticks, `<(...)`), with its words evaluated statically, its redirects, the
pipeline stages feeding its stdin, and the function it is defined in. Heredoc bodies are data, except for the
substitutions an unquoted heredoc expands.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mini_agent.safety.shell import evaluation, grammar
from mini_agent.safety.shell.commands import Assignment, Command, Redirect, Script
from mini_agent.safety.shell.grammar import Source
from mini_agent.safety.shell.variables import Variables
from mini_agent.safety.shell.words import SUBSTITUTIONS, Node, Word, evaluate, literal, unescape_backticks

TREE_DEPTH_LIMIT = 200
"""Deepest syntax tree walked; deeper input (thousands of nested parentheses) is not checked."""
# Children of a heredoc node that belong to the heredoc; any other child is the rest of the statement.
HEREDOC_PARTS = ("heredoc_start", "heredoc_body", "heredoc_end", "file_redirect", "herestring_redirect")


def parse(source: str, stdin: tuple[Command, ...] | None = None) -> Script:
    """The simple commands of a script; `stdin` are the commands piping into it, for `... | bash -c '...'`."""
    prepared = grammar.prepare(source)
    if prepared is None:
        return Script((), frozenset(), False)
    tree = grammar.parse(prepared)
    walker = _Walker(prepared, tree.root_node)
    try:
        walker.visit(tree.root_node, _Context(upstream=stdin or (), piped=stdin is not None))
    except RecursionError:
        walker.depth_ok = False
    parsed = not tree.root_node.has_error and walker.depth_ok
    return Script(tuple(walker.commands), frozenset(walker.functions), parsed)


@dataclass(frozen=True)
class _Context:
    upstream: tuple[Command, ...] = ()
    piped: bool = False
    in_pipeline: bool = False
    background: bool = False
    function: str | None = None
    redirects: tuple[Redirect, ...] = ()
    """Redirects of an enclosing compound statement (`{ ...; } > out`), which apply to every command in it."""
    depth: int = 0


class _Walker:
    """Collects the commands of one parsed script; word evaluation asks it for text and variables."""

    def __init__(self, source: Source, root: Node):
        self.source = source
        self.commands: list[Command] = []
        self.functions: set[str] = set()
        self.variables = Variables(root, source.text)
        self.depth_ok = True
        self.code_in_variables = False

    def text(self, node: Node) -> str:
        return self.source.text(node)

    def lookup(self, name: str) -> str | None:
        return self.variables.lookup(name)

    def words(self, nodes: list[Node]) -> list[Word]:
        """Evaluate argument nodes, joining neighbours with no space between (`$"..."` parses as two nodes)."""
        groups: list[list[Node]] = []
        for node in sorted(nodes, key=lambda n: n.start_byte):
            if groups and groups[-1][-1].end_byte == node.start_byte:
                groups[-1].append(node)
            else:
                groups.append([node])
        return [word for group in groups for word in evaluate(group, self)]

    def visit(self, node: Node, context: _Context) -> list[Command]:
        """Record the commands under `node`; return them (a pipeline stage's output feeds the next)."""
        if context.depth > TREE_DEPTH_LIMIT:
            self.depth_ok = False
            return []
        context = replace(context, depth=context.depth + 1)
        handler = getattr(self, "_" + node.type, self._children)
        return handler(node, context)

    def _record(
        self, words: list[Word], context: _Context, assignments=(), redirects=(), declaration=False, evaluates=None
    ):
        values = [*words, *(a.value for a in assignments if a.value), *(r.target for r in redirects if r.target)]
        evaluates = evaluates or next((word.evaluates for word in values if word.evaluates), None)
        command = Command(
            words=tuple(words),
            assignments=tuple(assignments),
            redirects=tuple(redirects) + context.redirects,
            upstream=context.upstream,
            piped=context.piped,
            in_pipeline=context.in_pipeline,
            background=context.background,
            function=context.function,
            declaration=declaration,
            evaluates=evaluates,
            code_in_variables=self.code_in_variables,
        )
        self.commands.append(command)
        return [command]

    def _nested(self, node: Node, context: _Context) -> list[Command]:
        """Commands inside a word: `$(...)`, backticks, `<(...)` at any depth."""
        if node.type in SUBSTITUTIONS:
            return self.visit(node, context)
        return [command for child in node.named_children for command in self._nested(child, context)]

    def _comment(self, node: Node, context: _Context) -> list[Command]:
        return []

    _heredoc_body = _comment  # only _redirects looks inside, for the substitutions an unquoted heredoc expands

    def _command_substitution(self, node: Node, context: _Context) -> list[Command]:
        inner = self.text(node)
        if inner.startswith("`") and "\\" in inner:
            # Inside backticks, `\``, `\$` and `\\` lose their backslash before the text is parsed again:
            # `` `echo \`rm x\`` `` runs rm.
            nested = parse(unescape_backticks(inner[1:-1]))
            self.depth_ok = self.depth_ok and nested.parsed
            self.commands += nested.commands
            return list(nested.commands)
        inside = replace(context, in_pipeline=False, background=False, redirects=())
        return [command for child in node.named_children for command in self.visit(child, inside)]

    _process_substitution = _command_substitution

    def _pipeline(self, node: Node, context: _Context) -> list[Command]:
        return self._stages(list(node.named_children), context)

    def _stages(self, stages: list[Node], context: _Context, fed: tuple[Command, ...] = ()) -> list[Command]:
        found: list[Command] = list(fed)
        for stage in stages:
            piped = context.piped or bool(found)
            found += self.visit(
                stage, replace(context, upstream=context.upstream + tuple(found), piped=piped, in_pipeline=True)
            )
        return found[len(fed) :]

    def _function_definition(self, node: Node, context: _Context) -> list[Command]:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        self.functions.add(self.text(name) if name is not None else "")
        inside = _Context(function=self.text(name) if name is not None else "", depth=context.depth)
        return self.visit(body, inside) if body is not None else []

    def _command(self, node: Node, context: _Context, extra_arguments=(), extra_redirects=()) -> list[Command]:
        found: list[Command] = []
        for index, child in enumerate(node.children):  # substitutions run before the command itself
            if child.is_named and node.field_name_for_child(index) != "redirect":
                found += self._nested(child, context)
        assignments = [self._assignment(child) for child in node.named_children if child.type == "variable_assignment"]
        name = node.child_by_field_name("name")
        words = self.words(
            [*([name] if name is not None else []), *node.children_by_field_name("argument"), *extra_arguments]
        )
        redirects = self._redirects([*node.children_by_field_name("redirect"), *extra_redirects], context, found)
        return found + self._record(words, context, assignments, redirects)

    def _assignment(self, node: Node) -> Assignment:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        text = self.text(name) if name is not None else ""
        if value is None:
            return Assignment(text, literal(""))
        if value.type == "array" or any(child.type == "+=" for child in node.children):
            return Assignment(text, None)
        word = self.words([value])[0]
        if word.value is not None and not word.expanded and evaluation.holds_code(word.value):
            self.code_in_variables = True
        if name is not None and name.type == "subscript" and not word.evaluates:
            word = replace(word, evaluates=evaluation.evaluates(name, self.text))
        return Assignment(text, word)

    def _bare(self, nodes: list[Node], context: _Context, words=(), declaration=False) -> list[Command]:
        """Assignments on their own (`x=1`), or declared (`export X=1`): later commands see them."""
        found = [command for node in nodes for command in self._nested(node, context)]
        assignments = [self._assignment(node) for node in nodes if node.type == "variable_assignment"]
        for assignment in assignments:
            self.variables.assign(assignment.name, assignment.value.value if assignment.value is not None else None)
        return found + self._record(list(words), context, assignments, declaration=declaration)

    def _variable_assignment(self, node: Node, context: _Context) -> list[Command]:
        return self._bare([node], context)

    def _variable_assignments(self, node: Node, context: _Context) -> list[Command]:
        return self._bare(list(node.named_children), context)

    def _glued(self, node: Node, context: _Context) -> list[Command] | None:
        """`export$x ...`: an expansion glued to the keyword makes a name only known at run time."""
        children = node.children
        if len(children) < 2 or children[1].start_byte != children[0].end_byte:
            return None
        found = self._nested(node, context)
        return found + self._record([Word(self.text(node), None, expanded=True)], context)

    def _declaration_command(self, node: Node, context: _Context) -> list[Command]:
        glued = self._glued(node, context)
        if glued is not None:
            return glued
        arguments = [child for child in node.named_children if child.type != "variable_assignment"]
        words = [literal(self.text(node.children[0])), *self._names(arguments)]
        return self._bare(list(node.named_children), context, words, declaration=True)

    def _unset_command(self, node: Node, context: _Context) -> list[Command]:
        glued = self._glued(node, context)
        if glued is not None:
            return glued
        found = self._nested(node, context)
        return found + self._record([literal(self.text(node.children[0])), *self._names(node.named_children)], context)

    def _names(self, nodes: list[Node]) -> list[Word]:
        """Arguments of export / declare / unset, where a bare variable name is a plain word."""
        return [literal(self.text(n)) if n.type == "variable_name" else w for n in nodes for w in self.words([n])]

    def _test_command(self, node: Node, context: _Context) -> list[Command]:
        """`[[ ... ]]`, `[ ... ]` and `(( ... ))` test or compute; only their substitutions run commands."""
        found = self._nested(node, context)
        keyword = self.text(node.children[0]) if node.children else "[["
        rest = self.text(node)[len(keyword) :].strip()
        evaluates = evaluation.statement_evaluates(node, self.text)
        return found + self._record([literal(keyword), literal(rest)], context, evaluates=evaluates)

    def _c_style_for_statement(self, node: Node, context: _Context) -> list[Command]:
        """`for (( ... ))`: the header is arithmetic, recorded as a command of its own; then the body."""
        header = self.text(node).split("))")[0] + "))"
        body = node.child_by_field_name("body")
        found = [c for child in node.named_children if child != body for c in self._nested(child, context)]
        found += self._record([literal(header)], context, evaluates=evaluation.statement_evaluates(node, self.text))
        return found + (self.visit(body, context) if body is not None else [])

    def _compound_statement(self, node: Node, context: _Context) -> list[Command]:
        if node.children and node.children[0].type == "((":
            return self._test_command(node, context)
        return self._children(node, context)

    def _children(self, node: Node, context: _Context) -> list[Command]:
        """Any other node: its commands are those of its children, a child followed by `&` in the background."""
        found: list[Command] = []
        for child in node.named_children:
            following = child.next_sibling
            backgrounded = following is not None and following.type == "&"
            found += self.visit(child, replace(context, background=True) if backgrounded else context)
        return found

    def _redirected_statement(self, node: Node, context: _Context) -> list[Command]:
        body = node.child_by_field_name("body")
        # tree-sitter puts words after a redirect target (`cat > out a b`) among the redirect's destinations,
        # and the rest of a pipeline or list that follows a heredoc inside the heredoc node.
        arguments: list[Node] = []
        continuations: list[Node] = []
        redirect_nodes: list[Node] = []
        for redirect in node.children_by_field_name("redirect"):
            arguments += redirect.children_by_field_name("destination")[1:]
            redirect_nodes += [redirect, *redirect.children_by_field_name("redirect")]
            if redirect.type == "heredoc_redirect":
                continuations += [child for child in redirect.named_children if child.type not in HEREDOC_PARTS]
        if body is not None and body.type == "command":
            statement = self._command(body, context, arguments, redirect_nodes)
        else:
            statement = []
            redirects = self._redirects(redirect_nodes, context, statement)
            if body is None:
                statement += self._record([], context, redirects=redirects)
            else:
                statement += self.visit(body, replace(context, redirects=context.redirects + redirects))
        for continuation in continuations:
            if continuation.type == "pipeline":
                statement += self._stages(list(continuation.named_children), context, tuple(statement))
            else:
                statement += self.visit(continuation, context)
        return statement

    def _file_redirect(self, node: Node, context: _Context) -> list[Command]:
        """A redirect with no command: `$(< file)` reads the file, `> file` alone truncates it."""
        found: list[Command] = []
        redirects = self._redirects([node], context, found)
        return found + self._record([], context, redirects=redirects)

    _herestring_redirect = _file_redirect

    def _redirects(self, nodes: list[Node], context: _Context, found: list[Command]) -> tuple[Redirect, ...]:
        """The redirects as data; commands in their words (and in unquoted heredocs) are added to `found`."""
        redirects = []
        for node in nodes:
            operator = next((self.text(child) for child in node.children if not child.is_named), "")
            if node.type == "heredoc_redirect":
                for child in node.children:
                    found += self._nested(child, context) if child.type == "heredoc_body" else []
                start = next((self.text(c) for c in node.children if c.type == "heredoc_start"), "")
                redirects.append(Redirect(operator, None, self._heredoc_text(node), operator + start))
                continue
            found += self._nested(node, context)
            if node.type == "herestring_redirect":
                value = self.words(list(node.named_children))
                body = value[0].value + "\n" if len(value) == 1 and value[0].value is not None else None
                redirects.append(Redirect(operator, None, body, f"{operator} {' '.join(w.shown for w in value)}"))
                continue
            descriptor = node.child_by_field_name("descriptor")
            destinations = node.children_by_field_name("destination")
            target = self.words(destinations[:1])[0] if destinations else None
            shown = target.shown if target is not None else ""
            space = "" if (operator.endswith("&") and shown.isdigit()) or shown == "-" else " "
            fd = self.text(descriptor) if descriptor is not None else ""
            redirects.append(Redirect(operator, target, text=f"{fd}{operator}{space}{shown}"))
        return tuple(redirects)

    def _heredoc_text(self, node: Node) -> str | None:
        """A heredoc's text, when it is fixed: a quoted delimiter, or no expansions in the body."""
        start = next((child for child in node.children if child.type == "heredoc_start"), None)
        body = next((child for child in node.children if child.type == "heredoc_body"), None)
        if body is None:
            return ""
        quoted = start is not None and any(mark in self.text(start) for mark in "'\"\\")
        if not quoted and any(child.type != "heredoc_content" for child in body.named_children):
            return None
        return self.text(body)
