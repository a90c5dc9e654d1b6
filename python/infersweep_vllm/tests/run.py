"""Run the plugin tests and write one JSON line per test ({"id", "outcome", "detail"}) to argv[1]
(test/vllm/plugin.int.test.ts reads it: vitest reports each Python test by name)."""

import json
import sys
import unittest
from pathlib import Path


class Recorder(unittest.TextTestResult):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.records = []

    def _add(self, test, outcome, detail=""):
        self.records.append({"id": test.id(), "outcome": outcome, "detail": detail})

    def addSuccess(self, test):
        super().addSuccess(test)
        self._add(test, "ok")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._add(test, "failed", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._add(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._add(test, "skipped", reason)


def main() -> int:
    out = Path(sys.argv[1])
    suite = unittest.defaultTestLoader.discover(str(Path(__file__).parent))
    result = unittest.TextTestRunner(resultclass=Recorder, verbosity=2).run(suite)
    out.write_text("".join(json.dumps(r) + "\n" for r in result.records))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
