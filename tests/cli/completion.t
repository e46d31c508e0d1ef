# kreach completion bash|zsh|fish prints a completion script generated from the commands' own
# parsers. The bash one is run here: it completes command names, a command's options and the
# choices of an option.
$ kreach completion bash > /dev/null && kreach completion bash | bash -n && echo parsed
= parsed
$ f=$(mktemp) && kreach completion bash > $f && bash -c 'source "$1"; COMP_WORDS=(kreach ev); COMP_CWORD=1; _kreach; echo "commands: ${COMPREPLY[*]}"; COMP_WORDS=(kreach eval --timing-s); COMP_CWORD=2; _kreach; echo "options: ${COMPREPLY[*]}"; COMP_WORDS=(kreach lint --dtype ""); COMP_CWORD=3; _kreach; echo "dtypes: ${COMPREPLY[*]}"' _ $f; s=$?; rm -f $f; exit $s
= commands: eval
= options: --timing-seed --timing-sets
= dtypes: f32 bf16 f16
$ kreach completion zsh
~ ^#compdef kreach$
~ eval
$ kreach completion fish
~ complete %-c kreach
$ kreach completion tcsh
? 2
~ argument 'shell' must be one of 'bash', 'zsh', 'fish'
