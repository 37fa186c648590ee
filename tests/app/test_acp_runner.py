"""The main thread's runner of `mini-agent acp` (app/acp_runner.py): a cancel interrupts a turn as Ctrl-C does,
even when its first signal is spent, and one with no turn running interrupts nothing."""

from __future__ import annotations

import signal
import threading

from support import PATIENCE

from mini_agent.app.acp_runner import CANCEL, MainThreadRunner


def serve_with(runner: MainThreadRunner, driver) -> None:
    """Run `driver` on another thread while the runner serves here (a test runs on the main thread)."""

    def drive() -> None:
        try:
            driver()
        finally:
            runner.stop()

    thread = threading.Thread(target=drive)
    thread.start()
    runner.serve()
    thread.join(PATIENCE)


def test_a_cancel_interrupts_the_turn_it_names_while_it_waits():
    runner = MainThreadRunner()
    inside = threading.Event()

    def turn() -> str:
        with runner.interruptible("s1"):
            inside.set()
            threading.Event().wait(PATIENCE)  # a blocking wait, as a command's or the model's
        return "finished"

    jobs = []

    def driver() -> None:
        jobs.append(runner.submit(turn))
        inside.wait(PATIENCE)
        assert not runner.interrupt("another session")
        assert runner.interrupt("s1")
        assert isinstance(jobs[0].exception(PATIENCE), KeyboardInterrupt)

    serve_with(runner, driver)
    assert isinstance(jobs[0].exception(0), KeyboardInterrupt)


def test_a_cancel_whose_signal_was_spent_before_the_wait_still_ends_it():
    """A signal that lands between the last check for one and a blocking wait is gone before the wait begins:
    the cancel repeats it until it has raised."""
    runner = MainThreadRunner()
    inside, spent = threading.Event(), threading.Event()

    def turn() -> str:
        with runner.interruptible("s1"):
            ours = signal.signal(CANCEL, lambda *_: spent.set())  # the first signal lands here, to no effect
            inside.set()
            spent.wait(PATIENCE)
            signal.signal(CANCEL, ours)
            threading.Event().wait(PATIENCE)
        return "finished"

    jobs = []

    def driver() -> None:
        jobs.append(runner.submit(turn))
        inside.wait(PATIENCE)
        assert runner.interrupt("s1")
        jobs[0].exception(PATIENCE)

    serve_with(runner, driver)
    assert isinstance(jobs[0].exception(0), KeyboardInterrupt)


def test_a_cancel_with_no_turn_running_interrupts_nothing_and_later_jobs_run():
    runner = MainThreadRunner()
    results = []

    def driver() -> None:
        assert not runner.interrupt("s1")  # no turn running: nothing to interrupt
        results.append(runner.submit(lambda: "next job").result(PATIENCE))

    serve_with(runner, driver)
    assert results == ["next job"]
