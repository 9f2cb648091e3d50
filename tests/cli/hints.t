# A target that is not there (exit 4): the error and one hint naming the way
# out (moved from test_ux.py's Hints.test_missing_tree), and an unknown
# shipped manifest (from test_cli.py's ShippedManifests.test_show_unknown).
exit: 4

args: --json status --cuda-root {gone}
json.error.hint~: --cuda-root
json.error.hint~: doctor

args: --json status --cuda v11.6
env: CUDA_PATH_V11_6={gone}
json.error.hint~: if CUDA v11.6 is installed elsewhere, name its folder with --cuda-root DIR

name: the error and its hint, two lines
args: status --cuda-root {gone}
stderr-lines: 2

name: unknown shipped manifest
args: manifest show cudnn-0.0.0-nothing
exit: 2
stderr/: \S
