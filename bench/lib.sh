# Shared by the bench scripts (sourced): a scratch directory removed on exit, `field KEY FILE`,
# which prints a top-level numeric value of an `nmpsim ... --json` file, and `publish` (below).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { sed -n "s/^  \"$1\": \([-0-9.eE+]*\),\{0,1\}$/\1/p" "$2"; }
# publish SRC DEST: moves a finished file into place; a DEST that is a symlink, a directory or a device is
# refused (one line, exit 2), never replaced.
publish() {
  if [ -L "$2" ] || { [ -e "$2" ] && [ ! -f "$2" ]; }; then
    echo "error: $2: not a regular file (a symlink, directory or device is not replaced)" >&2
    exit 2
  fi
  mv -f "$1" "$2"
}
