# README.md, "A first script": its first script launches its own kernel, so it needs a GPU and
# the host device refuses it; the command the README gives instead runs on any machine, typed
# as the README shows it, from a directory where build/ is this binary's directory.
$ kreach --device host experiments/examples/add.lua
? 1
~ is not available on the host device
$ d=$(mktemp -d) && ln -s "$(dirname "$(command -v kreach)")" "$d/build" && cd "$d" && build/kreach --device host oracle 19 --small
~ ^19_ReLU at f32 %(seed 1, small sizes batch_size=2 dim=8%)
~ ^  y +relative L2 0%.000e%+00
