"""The check counter of the Python suites."""


class Checks:
    """Counts the checks that passed; the first that fails ends the run."""

    def __init__(self):
        self.passed = 0

    def __call__(self, name, condition):
        if not condition:
            raise AssertionError(name)
        self.passed += 1
        print("ok   " + name, flush=True)
