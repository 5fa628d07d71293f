# Shared by the bench scripts (sourced): a scratch directory removed on exit, and `field KEY FILE`,
# which prints a top-level numeric value of an `nmpsim ... --json` file.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { sed -n "s/^  \"$1\": \([-0-9.eE+]*\),\{0,1\}$/\1/p" "$2"; }
