# issue 35: what -o (or --out) names, said in every command's help: kreach export and kreach
# generate write into a directory, kreach results export and kreach profile write a file.
# Needs no GPU.
$ kreach export --help
~ ^ +%-o <dir>,
~ ^ +%-%-output <dir>
~ The directory to write into
$ kreach results export --help
~ ^ +%-o <file>,
~ ^ +%-%-output <file>
~ The file to write
$ kreach profile --help
~ ^ +%-o <file>,
~ ^ +%-%-output <file>
$ kreach generate --help
~ ^ +%-%-out <dir> +The directory
# kreach export without -o says that it wants a directory
$ kreach export 19
? 2
= kreach export: -o DIR is required
$ f=$(mktemp) && kreach export 19 -o $f
? 2
~ is a file, not a directory
