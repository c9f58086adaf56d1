# pgvector for CI (sourced by .ci/run). Needs .ci/lib.sh and .ci/postgres.sh.
#
# Debian 12 only ships pgvector 0.4, so pgvector is built from Debian's own *source*
# package in the next release (trixie, pgvector 0.8.x) against the local PostgreSQL 15:
# a private `deb-src`-only apt source on the machine's own mirror (so apt can never pull
# trixie binaries), `apt-get source`, then `make && make install` via PGXS.

PGVECTOR_SUITE=${PGVECTOR_SUITE:-trixie}
PGVECTOR_APT_SOURCE=/etc/apt/sources.list.d/vecsync-${PGVECTOR_SUITE}-src.sources
PGVECTOR_CONTROL=/usr/share/postgresql/${PG_VERSION}/extension/vector.control

export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-qq -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=300)

# The pgvector version the cluster would install (from the control file).
pgvector_installed_version() {
  sed -n "s/^default_version *= *'\(.*\)'.*/\1/p" "$PGVECTOR_CONTROL" 2>/dev/null
}

# Print "URI<TAB>SIGNED-BY" of the first enabled binary ("deb") source of suite $1 in the
# machine's own apt configuration (deb822 .sources or one-line .list); fail if there is none.
apt_mirror_for_suite() {
  local suite=$1 f out
  for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list \
           /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    case $f in */vecsync-*) continue ;; esac
    case $f in
      *.sources)
        out=$(awk -v suite="$suite" '
          function flush() {
            if (!found && enabled != "no" && (" " types " ") ~ / deb / &&
                (" " suites " ") ~ (" " suite " ") && uris != "") {
              split(uris, u, " "); print u[1] "\t" signed; found = 1
            }
            types = uris = suites = signed = enabled = ""
          }
          /^[ \t]*#/ { next }
          /^[ \t]*$/ { flush(); next }
          match($0, /^[A-Za-z-]+:/) {
            key = tolower(substr($0, 1, RLENGTH - 1)); val = substr($0, RLENGTH + 1)
            gsub(/^[ \t]+|[ \t]+$/, "", val); gsub(/[ \t]+/, " ", val)
            if (key == "types") types = val
            else if (key == "uris") uris = val
            else if (key == "suites") suites = val
            else if (key == "signed-by") signed = val
            else if (key == "enabled") enabled = tolower(val)
          }
          END { flush() }' "$f") ;;
      *)
        out=$(awk -v suite="$suite" '
          /^[ \t]*deb[ \t]/ && !found {
            line = $0; opts = ""; signed = ""
            sub(/^[ \t]*deb[ \t]+/, "", line)
            if (line ~ /^\[/) { i = index(line, "]"); opts = substr(line, 2, i - 2); line = substr(line, i + 1) }
            sub(/^[ \t]+/, "", line); n = split(line, w, /[ \t]+/)
            if (n >= 2 && w[2] == suite) {
              if (match(opts, /signed-by=[^ \t]+/)) signed = substr(opts, RSTART + 10, RLENGTH - 10)
              print w[1] "\t" signed; found = 1
            }
          }' "$f") ;;
    esac
    if [ -n "$out" ]; then printf '%s\n' "$out"; return 0; fi
  done
  return 1
}

# Write the private deb-src-only source list for $PGVECTOR_SUITE on the machine's mirror.
pgvector_write_apt_source() {
  local codename mirror uri keyring
  codename=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || die "cannot read VERSION_CODENAME from /etc/os-release"
  mirror=$(apt_mirror_for_suite "$codename") \
    || die "no apt source for suite '$codename' in /etc/apt/sources.list{,.d/}; cannot derive the Debian mirror"
  uri=${mirror%%$'\t'*}
  keyring=${mirror#*$'\t'}
  # An inline key block cannot be copied in one line; fall back to the archive keyring.
  if [ -z "$keyring" ] || [ ! -f "$keyring" ]; then
    keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  fi
  note "mirror (from the $codename source): $uri"
  note "writing $PGVECTOR_APT_SOURCE (deb-src only, suite $PGVECTOR_SUITE)"
  as_root tee "$PGVECTOR_APT_SOURCE" >/dev/null <<SRC
# Written by vecsync .ci/pgvector.sh. Source packages only (no binaries can come from
# $PGVECTOR_SUITE): used to fetch pgvector's Debian source package. Removed after use.
Types: deb-src
URIs: $uri
Suites: $PGVECTOR_SUITE
Components: main
Signed-By: $keyring
SRC
}

pgvector_build() (
  # Runs in a subshell so that the EXIT trap cleans up whatever happens.
  local tmp srcdir pg_config jobs
  tmp=$(mktemp -d /tmp/vecsync-pgvector.XXXXXX)
  trap 'as_root rm -f "$PGVECTOR_APT_SOURCE"; rm -rf "$tmp"' EXIT

  pgvector_write_apt_source

  note "apt-get update (only the $PGVECTOR_SUITE source list)"
  as_root apt-get "${APT_OPTS[@]}" update \
    -o Dir::Etc::sourcelist="$PGVECTOR_APT_SOURCE" -o Dir::Etc::sourceparts=- \
    -o APT::Get::List-Cleanup=0

  local pkgs=(postgresql-server-dev-"$PG_VERSION" dpkg-dev build-essential)
  note "apt-get install ${pkgs[*]}"
  if ! as_root apt-get "${APT_OPTS[@]}" install -y --no-install-recommends "${pkgs[@]}" >"$tmp/apt-install.log" 2>&1; then
    note "install failed with the current package lists; running a full apt-get update and retrying"
    as_root apt-get "${APT_OPTS[@]}" update
    run_logged "$tmp/apt-install.log" \
      as_root apt-get "${APT_OPTS[@]}" install -y --no-install-recommends "${pkgs[@]}"
  fi

  note "apt-get source pgvector/$PGVECTOR_SUITE"
  # Let apt's unprivileged download user write there (avoids the "unsandboxed" warning).
  if id _apt >/dev/null 2>&1; then chown _apt "$tmp" 2>/dev/null || true; fi
  (cd "$tmp" && run_logged "$tmp/apt-source.log" apt-get -q source "pgvector/$PGVECTOR_SUITE")
  srcdir=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)
  [ -n "$srcdir" ] && [ -f "$srcdir/Makefile" ] || die "apt-get source did not unpack pgvector into $tmp"
  note "source: $(basename "$srcdir")"

  # The version-specific pg_config, so a later server-dev package cannot redirect the build.
  pg_config=/usr/lib/postgresql/$PG_VERSION/bin/pg_config
  [ -x "$pg_config" ] || pg_config=/usr/bin/pg_config
  jobs=$(nproc 2>/dev/null || echo 2)
  # OPTFLAGS= drops pgvector's default -march=native (as Debian's packaging does), so the
  # installed library does not depend on this particular CPU.
  note "make && make install (PG_CONFIG=$pg_config, $("$pg_config" --version))"
  run_logged "$tmp/make.log" make -C "$srcdir" -j"$jobs" PG_CONFIG="$pg_config" OPTFLAGS=
  run_logged "$tmp/make-install.log" as_root make -C "$srcdir" install PG_CONFIG="$pg_config" OPTFLAGS=
)

# Check that the server can actually create the extension, in a throwaway database.
pgvector_check() {
  local db="vecsync_ci_pgvector_check_$$" rc=0
  pg_sql -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
  PG_DB=$db pg_sql -c 'CREATE EXTENSION IF NOT EXISTS vector' \
    -c "SELECT '[1,2,3]'::vector <-> '[3,2,1]'::vector" >/dev/null || rc=$?
  pg_sql -c "DROP DATABASE IF EXISTS $db"
  [ "$rc" -eq 0 ] || die "CREATE EXTENSION vector failed"
  note "CREATE EXTENSION vector works (checked in a throwaway database, dropped again)"
}

pgvector_ensure() {
  if [ -f "$PGVECTOR_CONTROL" ]; then
    note "pgvector $(pgvector_installed_version) is installed ($PGVECTOR_CONTROL)"
  else
    note "pgvector is not installed for PostgreSQL $PG_VERSION; building it from Debian's source package"
    local t0=$SECONDS
    pgvector_build
    [ -f "$PGVECTOR_CONTROL" ] || die "pgvector build finished but $PGVECTOR_CONTROL is missing"
    note "pgvector $(pgvector_installed_version) installed in $((SECONDS - t0))s"
  fi
  pgvector_check
}
