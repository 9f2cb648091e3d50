# Help and version (exit 0), moved from test_cli.py's HelpAndVersion: the
# commands and the exit codes documented, each command's options listed, and
# help touches no tree.
exit: 0

name: --help lists the commands and the exit codes
args: --help
output~: install
output~: status
output~: uninstall
output~: recover
output~: manifest
output/: (?i)exit

name: install --help lists its options
args: install --help
output~: --archive
output~: --manifest
output~: --dry-run
output~: --cuda
output~: --cuda-root
output~: --prefix
output~: --force
output~: --sha256
output~: --lock-timeout

name: status --help
args: status --help
output~: status

name: uninstall --help
args: uninstall --help
output~: uninstall

name: recover --help
args: recover --help
output~: recover

name: manifest --help
args: manifest --help
output~: manifest

name: --version is a version number
args: --version
output/: \d+\.\d+

name: install --help touches nothing (not even a lock)
args: install --help --cuda-root {tree}
tree: untouched
