from mini_agent.cli.main import main
from mini_agent.process_end import run_and_exit

run_and_exit(main)  # as the installed command ends (entry.py): without the interpreter's teardown
