"""What the fake-library builders (fakecudnn.py, fakecudnn_win.py) share:
a tool run that raises with its output, and the builds of one test process,
each made once in a folder of its own under a root."""

import os
import subprocess


def run(cmd, what):
    """Run cmd; on a non-zero exit raise RuntimeError naming what failed,
    the command line and everything it printed."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        raise RuntimeError("%s failed:\n$ %s\n%s"
                           % (what, " ".join(cmd),
                              p.stdout.decode(errors="replace")))


class Builds:
    """Builds cached for the whole test process, under root."""

    def __init__(self, root):
        self.root = root
        self._cache = {}

    def once(self, key, make):
        """make()'s result for key, made at the first call only."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def dir(self, *parts):
        """The folder root/parts..., made if missing."""
        d = os.path.join(self.root, *parts)
        os.makedirs(d, exist_ok=True)
        return d
