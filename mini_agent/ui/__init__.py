"""Everything that touches the terminal: renderers, the interactive loop, confirmation."""
