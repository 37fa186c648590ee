from mini_agent.cli import main

main()
