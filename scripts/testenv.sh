#!/usr/bin/env bash
# testenv.sh COMMAND [ARG...] runs COMMAND with everything sidecarlab's tests need, so that
# `make test` works on a fresh Debian machine with nothing installed by hand. The Makefile's test
# target is `./scripts/testenv.sh $(MAKE) -s test-build unit race fuzz e2e`; the targets it wraps still run on
# their own (then bringing the browser and PostgreSQL is up to you).
#
# What it brings, in order:
#   - Debian's `chromium-headless-shell`, Chromium's "old headless" shell (the same version as the
#     `chromium` package, without the desktop browser around it), for the browser tests (e2e/):
#     they take about two thirds of the CPU in it that they take in `chromium`. When it is
#     missing it is installed with apt-get if this runs as root; otherwise the script stops and
#     says how to install it.
#   - Debian's `fonts-noto-cjk`, so that the browser tests' Japanese and Korean screenshots show
#     their glyphs rather than empty boxes (e2e/lang_test.go); installed the same way.
#   - GNU `patch` (Debian's `patch`, priority optional, so not always there), which the engine's
#     tests apply every unified diff with (engine/patch_test.go); installed the same way.
#   - PostgreSQL, for the link store's tests (store/). If SIDECARLAB_TEST_POSTGRES is set, that
#     server is used as is. Otherwise Debian's `postgresql` server binaries are needed (installed
#     the same way when missing; the package may also create and start its own cluster on 5432,
#     which is left alone) and a throwaway server is started: a fresh cluster in a mktemp directory
#     (run as the `postgres` user when this runs as root, since initdb refuses root), trust
#     authentication, listening only on 127.0.0.1 on a free port, its socket in that directory.
#     SIDECARLAB_TEST_POSTGRES is exported for it, and when COMMAND ends the server is stopped and
#     the directory deleted, also on failure, Ctrl-C or TERM.
#   - axe-core, the accessibility checker the browser tests inject into every page they visit
#     (e2e/ reads static/node_modules/axe-core/axe.min.js; it is a devDependency of static/, never
#     served). When it is missing, `npm ci` runs in static/ (it needs Node.js and npm).
#   - SIDECARLAB_REQUIRE_POSTGRES=1, which makes the PostgreSQL tests fail rather than skip when
#     there is no SIDECARLAB_TEST_POSTGRES.
#   - A Kubernetes cluster with Istio, for the conformance tests (cmd/sidecarlab/conformance_test.go):
#     `make controlplane-bin` builds the control plane's programs (etcd, kube-apiserver,
#     kube-controller-manager, kubectl 1.36.1 and istiod at the engine's Istio version; the first
#     time ~8 minutes on 2 cores after make test's build step, whose packages it shares, then
#     seconds) into CONTROLPLANE_BIN, with meshup (internal/testcluster/meshup), which starts them
#     on free 127.0.0.1 ports, installs Istio as the engine renders it and runs its istiods.
#     Both are built and started beside COMMAND:
#     SIDECARLAB_TEST_CLUSTER_READY names the file it writes once ready (or why it failed), which
#     the tests that ask the cluster wait for (testkit.Kubeconfig); SIDECARLAB_TEST_KUBECTL is the
#     kubectl built with it. It is stopped (its directories deleted) when COMMAND ends, also on
#     failure, Ctrl-C or TERM.
#     If SIDECARLAB_TEST_KUBECONFIG is already set, that cluster is used (one `make controlplane`
#     started). SIDECARLAB_REQUIRE_CONTROLPLANE=1 makes the conformance tests fail rather than skip
#     without one.
#
# Future test dependencies go here too, so that `make test` keeps bringing all it needs.
#
# Exits with COMMAND's exit status (128+N if it was killed by signal N).
set -euo pipefail

if (($# == 0)); then
  echo "usage: $0 COMMAND [ARG...]" >&2
  exit 2
fi

# Our own messages and apt-get's output go to stderr; stdout is COMMAND's alone.
say() { echo "testenv: $*" >&2; }
die() {
  say "$*"
  exit 1
}

is_root() { [[ $EUID -eq 0 ]]; }

# apt_install PACKAGE WHAT: installs a Debian package as root; otherwise stops and says how to.
apt_updated=
apt_install() {
  local pkg=$1 what=$2
  if ! is_root; then
    die "Debian's package '$pkg' is needed for $what but is not installed; install it as root:
    sudo apt-get update && sudo apt-get install -y --no-install-recommends $pkg"
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    die "Debian's package '$pkg' (or your system's equivalent) is needed for $what, and there is no apt-get"
  fi
  say "installing Debian's package '$pkg' for $what"
  export DEBIAN_FRONTEND=noninteractive
  if [[ -z $apt_updated ]]; then
    apt-get update >&2
    apt_updated=1
  fi
  apt-get install -y --no-install-recommends "$pkg" >&2
}

# Cleanup, run on every exit: stop the throwaway PostgreSQL (if one was started) and delete its
# directory. Set before anything is started, so an interrupted set-up is cleaned up as well.
pg_dir=
cp_pid=
cp_dir=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
  set +e
  cd / # somewhere the postgres user may be
  if [[ -n $cp_pid ]]; then
    # meshup stops its programs and deletes its directories on TERM.
    kill -TERM "$cp_pid" 2>/dev/null
    wait "$cp_pid" 2>/dev/null
  fi
  if [[ -n $cp_dir ]]; then
    rm -rf "$cp_dir"
  fi
  if [[ -n $pg_dir ]]; then
    if [[ -f $pg_dir/data/postmaster.pid ]]; then
      as_pg "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast -w stop >/dev/null 2>&1 ||
        as_pg "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate -w stop >/dev/null 2>&1 ||
        say "could not stop the PostgreSQL server in $pg_dir/data"
    fi
    rm -rf "$pg_dir"
  fi
}
trap cleanup EXIT

# Signals: while COMMAND runs they are passed on to it (and the script exits with its status once
# it ends); before that, the script stops at once (and cleanup runs). A Ctrl-C reaches COMMAND
# directly too, since it shares the terminal's process group.
child=
# shellcheck disable=SC2317 # called by the traps
on_signal() {
  local sig=$1
  if [[ -n $child ]]; then
    kill -s "$sig" "$child" 2>/dev/null || true
  else
    exit $((128 + $(kill -l "$sig")))
  fi
}
for sig in INT TERM HUP; do
  # shellcheck disable=SC2064 # $sig is meant to expand now
  trap "on_signal $sig" "$sig"
done

# --- Chromium's headless shell, for the browser tests (e2e/ runs /usr/bin/chromium-headless-shell).
if ! command -v chromium-headless-shell >/dev/null 2>&1; then
  apt_install chromium-headless-shell "the browser tests (make e2e)"
  command -v chromium-headless-shell >/dev/null 2>&1 || die "chromium-headless-shell is still not on PATH after installing it"
fi

# --- CJK fonts, for the browser tests' Japanese and Korean pages (e2e/lang_test.go). Checked by
# the package (dpkg) or, off Debian, by fonts that fontconfig knows for both languages.
has_font() { fc-list ":lang=$1" 2>/dev/null | grep -q .; }
if ! dpkg -s fonts-noto-cjk >/dev/null 2>&1 && ! { has_font ja && has_font ko; }; then
  apt_install fonts-noto-cjk "the browser tests' Japanese and Korean screenshots (make e2e)"
fi

# --- GNU patch, to check that the unified diff is a patch (engine/patch_test.go).
if ! command -v patch >/dev/null 2>&1; then
  apt_install patch "the unified diff's patch test (make unit)"
  command -v patch >/dev/null 2>&1 || die "patch is still not on PATH after installing it"
fi

# --- axe-core, for the browser tests' accessibility checks (pinned in static/package-lock.json).
static_dir=$(cd "$(dirname "$0")/../static" && pwd)
if [[ ! -f $static_dir/node_modules/axe-core/axe.min.js ]]; then
  command -v npm >/dev/null 2>&1 || die "npm (Node.js) is needed to bring axe-core for the browser tests; install Debian's 'npm' package"
  say "installing static/'s npm packages (axe-core for the browser tests)"
  (cd "$static_dir" && npm ci --no-audit --no-fund >&2) || die "npm ci in static/ failed"
fi

# --- PostgreSQL, for the link store's tests.
export SIDECARLAB_REQUIRE_POSTGRES=1

# as_pg COMMAND...: runs COMMAND as the owner of the throwaway cluster: the postgres user if we
# are root (initdb and postgres refuse to run as root), else ourselves.
as_pg() {
  if is_root; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# pg_server_bin: the newest Debian PostgreSQL server's bin directory, if one is installed.
pg_server_bin() {
  local ctl
  ctl=$(compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' | sort -V | tail -n 1) || true
  if [[ -n $ctl && -x $ctl && -x ${ctl%/*}/initdb && -x ${ctl%/*}/postgres ]]; then
    echo "${ctl%/*}"
  fi
}

# port_in_use PORT: something already accepts connections on 127.0.0.1:PORT (or listens there).
port_in_use() {
  local port=$1
  if command -v ss >/dev/null 2>&1 && [[ -n $(ss -Htln "sport = :$port" 2>/dev/null) ]]; then
    return 0
  fi
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null
}

if [[ -n ${SIDECARLAB_TEST_POSTGRES:-} ]]; then
  say "using the PostgreSQL server named by SIDECARLAB_TEST_POSTGRES"
else
  pg_bin=$(pg_server_bin)
  if [[ -z $pg_bin ]]; then
    apt_install postgresql "the link store's PostgreSQL tests (make unit)"
    pg_bin=$(pg_server_bin)
    [[ -n $pg_bin ]] || die "no /usr/lib/postgresql/*/bin/pg_ctl after installing postgresql"
  fi
  if is_root && ! id postgres >/dev/null 2>&1; then
    die "the 'postgres' user (made by Debian's postgresql package) is missing; initdb will not run as root"
  fi

  # A short path under /tmp: the unix socket (dir/.s.PGSQL.PORT) must fit in 107 bytes, and the
  # postgres user must be able to reach it when we are root.
  pg_dir=$(mktemp -d /tmp/sidecarlab-pg.XXXXXX)
  if is_root; then
    chown postgres: "$pg_dir"
  fi
  here=$PWD
  cd "$pg_dir" # somewhere the postgres user may be (it may not be allowed into $here)
  as_pg "$pg_bin/initdb" -D "$pg_dir/data" -U postgres -A trust --locale=C --encoding=UTF8 \
    --no-sync >"$pg_dir/initdb.log" 2>&1 || {
    cat "$pg_dir/initdb.log" >&2
    die "initdb failed"
  }

  # A free port: random ones in 20000-31999 (below Linux's ephemeral range), skipping those in use;
  # if the server still cannot bind one (another process took it meanwhile), try another.
  port=
  for ((attempt = 1; attempt <= 20; attempt++)); do
    candidate=$((20000 + RANDOM % 12000))
    if port_in_use "$candidate"; then
      continue
    fi
    rm -f "$pg_dir/server.log"
    # -F: no fsync, the data is thrown away anyway.
    if as_pg "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $candidate -k $pg_dir -F" start >"$pg_dir/pg_ctl.log" 2>&1; then
      port=$candidate
      break
    fi
    if ! grep -q 'already in use' "$pg_dir/server.log" 2>/dev/null; then
      cat "$pg_dir/pg_ctl.log" "$pg_dir/server.log" >&2 2>/dev/null || true
      die "the throwaway PostgreSQL server did not start"
    fi
    say "port $candidate was taken; trying another"
  done
  [[ -n $port ]] || die "found no free port for PostgreSQL on 127.0.0.1 in 20 tries"
  cd "$here"
  export SIDECARLAB_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
  pg_version=${pg_bin%/bin}
  say "PostgreSQL ${pg_version##*/} on 127.0.0.1:$port (data in $pg_dir, removed on exit)"
fi

# --- A Kubernetes cluster with Istio, for the conformance tests.
root_dir=$(cd "$(dirname "$0")/.." && pwd)
export SIDECARLAB_REQUIRE_CONTROLPLANE=1
if [[ -n ${SIDECARLAB_TEST_KUBECONFIG:-} ]]; then
  say "using the cluster of SIDECARLAB_TEST_KUBECONFIG"
else
  cp_bin=${CONTROLPLANE_BIN:-$HOME/.cache/sidecarlab/controlplane-1.36.1}
  cp_dir=$(mktemp -d /tmp/sidecarlab-cp.XXXXXX)
  ready=$cp_dir/ready
  say "building the test control plane's programs into $cp_bin (the first time ~8 minutes) and starting it, beside the tests"
  (
    make -s -C "$root_dir" controlplane-bin CONTROLPLANE_BIN="$cp_bin" ||
      { echo "building the control plane's programs failed (make controlplane-bin)"; exit 1; }
    exec "$cp_bin/meshup" -bin "$cp_bin" -ready-file "$ready"
  ) >"$cp_dir/meshup.log" 2>&1 &
  cp_pid=$!
  # COMMAND starts at once, beside the cluster's build (seconds when it is built: go checks that
  # it is) and start (~15 s of the API server and Istio's install): the tests that ask the cluster
  # wait for $ready (testkit.Kubeconfig), which meshup writes once Istio is ready (within its own
  # limits: 2 minutes for the API server, 5 for Istio). If the build fails or meshup exits before
  # that, this watcher writes why there instead, so no test waits on a cluster that will not come.
  (
    while kill -0 "$cp_pid" 2>/dev/null && [[ ! -s $ready ]]; do
      sleep 0.2
    done
    if [[ ! -s $ready ]]; then
      { echo "failed: the cluster's build or meshup ended before it was ready; the end of their output:"; tail -c 4000 "$cp_dir/meshup.log"; } >"$ready.tmp"
      mv "$ready.tmp" "$ready"
    fi
  ) &
  export SIDECARLAB_TEST_CLUSTER_READY=$ready SIDECARLAB_TEST_KUBECTL=$cp_bin/kubectl
fi

# --- The set-up's wall time, as a step of `make test-times` (TEST_TIMES: its folder).
if [[ -n ${TEST_TIMES:-} ]]; then
  mkdir -p "$TEST_TIMES"
  printf 'testenv\t%s\t0\t%s\n' "$SECONDS" "$(($(date +%s) - SECONDS))" >>"$TEST_TIMES/steps.tsv"
fi

# --- Run COMMAND. In the background, so that a TERM sent to this script is passed on at once
# rather than after COMMAND ends; `trap - INT QUIT` undoes bash's ignoring of those signals in
# background jobs, and <&0 keeps stdin (bash would give it /dev/null).
(
  trap - INT QUIT
  exec "$@"
) <&0 &
child=$!
status=0
wait "$child" || status=$?
# A trapped signal interrupts wait before COMMAND ends: wait again for COMMAND's own status.
while kill -0 "$child" 2>/dev/null; do
  status=0
  wait "$child" || status=$?
done
exit "$status"
