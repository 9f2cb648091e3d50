# Usage errors (exit 2): a message on stderr saying what is wrong and
# pointing at --help, a line not a page, nothing on stdout, the trees
# untouched (moved from test_cli.py's UsageErrors).
exit: 2
stdout:
stderr/: \S
stderr~: --help
stderr-lines: <=3

name: no command
args:

name: unknown command
args: frobnicate

name: unknown option
args: install --cuda-root {tree} --manifest {manifest} --archive {archive} --frobnicate

name: unknown global option
args: --frobnicate status --cuda-root {tree}

name: option of another command
args: status --cuda-root {tree} --archive {archive}

name: option without its value
args: install --manifest {manifest} --archive {archive} --cuda-root

name: no target
args: install --manifest {manifest} --archive {archive}

name: no target (status)
args: status

name: no target (uninstall)
args: uninstall

name: no target (recover)
args: recover

name: two targets
args: install --cuda-root {tree} --prefix {other} --manifest {manifest} --archive {archive}

name: --cuda and --cuda-root
args: install --cuda v11.6 --cuda-root {tree} --manifest {manifest} --archive {archive}

name: bad --cuda value
args: install --cuda banana --manifest {manifest} --archive {archive}

name: bad --cuda value v11.x
args: install --cuda v11.x --manifest {manifest} --archive {archive}

name: bad --lock-timeout
args: install --cuda-root {tree} --manifest {manifest} --archive {archive} --lock-timeout soon

name: bad --sha256
args: install --cuda-root {tree} --manifest {manifest} --archive {archive} --sha256 not-hex

name: stray argument
args: status --cuda-root {tree} extra

name: manifest without subcommand
args: manifest

name: unknown manifest subcommand
args: manifest frobnicate

name: manifest create without archive
args: manifest create

# The same as one JSON document: error code USAGE (and no target when there
# is no command to have one).
exit: 2
json.error.code: USAGE
json.ok: false

name: unknown command, --json
args: --json frobnicate
json.target: null

name: bad --cuda value, --json
args: --json install --cuda banana --archive {archive}

name: two targets, --json
args: --json status --cuda-root {tree} --prefix {other}
