# A mistyped command, option, value or manifest name is a usage error (2)
# that suggests the nearest one, and only when there is one near (moved from
# test_ux.py's Suggestions and ShellQuoting.test_unknown_shell).
exit: 2
stdout:

args: verfy
stderr~: unknown command 'verfy'; did you mean 'verify'?

args: unistall
stderr~: did you mean 'uninstall'?

args: stauts --cuda-root {tree}
stderr~: did you mean 'status'?

args: verify --lvel gpu
stderr~: unknown option '--lvel'; did you mean '--level'?

args: install --archve x
stderr~: did you mean '--archive'?

args: status --cuda-rot {tree}
stderr~: did you mean '--cuda-root'?

args: verify --verb
stderr~: did you mean '--verbose'?

args: verify --level gppu
stderr~: did you mean 'gpu'?

args: --color allways status
stderr~: did you mean 'always'?

args: help instal
stderr~: did you mean 'install'?

args: verify --cuda-root {tree} --shell fsih
stderr~: did you mean 'fish'?

# Nothing near: no suggestion.
exit: 2
stderr!~: did you mean

args: frobnicate

args: status --zzzzzzzz

# An option of another command says so, wherever it stands.
exit: 2

args: --archive x status --cuda-root {tree}
stderr~: does not apply to

# A mistyped shipped manifest name: the nearest name, not the whole list.
exit: 2
stderr~: did you mean 'cudnn-8.5.0.96-cuda11-linux-x86_64'?
stderr!~: windows
tree: untouched

args: install --cuda-root {tree} --manifest cudnn-8.5.0.96-cuda11-linux-x86_64x

args: install --cuda-root {tree} --manifest cudnn-8.5.0.96-cuda11-linx-x86_64

args: install --cuda-root {tree} --manifest cudnn-8.5.0.96-cuda11-linux-x86_6.json

args: verify --cuda-root {tree} --manifest cudnn-8.5.0.96-cuda11-linux-x86_64x

args: verify --cuda-root {tree} --manifest cudnn-8.5.0.96-cuda11-linx-x86_64

args: verify --cuda-root {tree} --manifest cudnn-8.5.0.96-cuda11-linux-x86_6.json

args: fetch --manifest cudnn-8.5.0.96-cuda11-linux-x86_64x

args: fetch --manifest cudnn-8.5.0.96-cuda11-linx-x86_64

args: fetch --manifest cudnn-8.5.0.96-cuda11-linux-x86_6.json

exit: 2

args: manifest show cudnn-9.14
stderr~: did you mean 'cudnn-9.14.0.64-cuda13-linux-x86_64'?

# Nothing near: still a usage error, pointing to the list; a path to a file
# that is not there stays "not found" (4).
tree: untouched

name: unknown manifest name
args: install --cuda-root {tree} --manifest zzz
exit: 2
stderr!~: did you mean
stderr~: manifest list
tree: untouched

name: manifest path that is not there
args: install --cuda-root {tree} --manifest {ws}/gone.json
exit: 4
tree: untouched
