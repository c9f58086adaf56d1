# Shared helpers for the CI scripts in .ci/ (sourced, not executed).
# Plain bash; expects `set -euo pipefail` from the caller.

CI_T0=${CI_T0:-$SECONDS}

section() { printf '\n== %s  [+%ss]\n' "$*" "$((SECONDS - CI_T0))"; }
note() { printf '   %s\n' "$*"; }
warn() { printf '   warning: %s\n' "$*" >&2; }
die() { printf '\nci: error: %s\n' "$*" >&2; exit 1; }

# Run a command as root (CI runs as root; sudo -n is a convenience for local runs).
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi
}

# Run a command with its output sent to a log file; on failure show the tail of the log.
run_logged() {
  local log=$1 rc=0; shift
  "$@" >"$log" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] && return 0
  printf '   command failed (exit %s): %s\n   --- last lines of %s ---\n' "$rc" "$*" "$log" >&2
  tail -n 40 "$log" | sed 's/^/   | /' >&2
  return "$rc"
}
