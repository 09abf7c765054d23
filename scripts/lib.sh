# Shared helpers for the project's scripts: install Debian packages and start PostgreSQL on loopback.

log() { printf '[setup] %s\n' "$*" >&2; }

# apt_install PKG...: installs the packages that are missing (needs root; apt-get update once).
apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    log "missing packages (${missing[*]}) and not root: install them and run again"
    return 1
  fi
  log "installing ${missing[*]}"
  # A fresh machine may be running apt already (unattended upgrades at boot): wait for its lock
  # rather than fail.
  local wait_lock=(-o DPkg::Lock::Timeout=600)
  if [ -z "${APT_UPDATED:-}" ]; then
    apt-get "${wait_lock[@]}" update -qq >&2
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get "${wait_lock[@]}" install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# ensure_postgres: PostgreSQL installed, a cluster running and accepting connections on 127.0.0.1.
ensure_postgres() {
  apt_install postgresql postgresql-client || return 1
  local version
  version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  if [ -z "$(pg_lsclusters -h 2>/dev/null)" ]; then
    log "creating PostgreSQL cluster $version/main"
    pg_createcluster "$version" main >&2
  fi
  local cluster
  cluster=$(pg_lsclusters -h | head -n 1)
  local cver cname cstatus
  cver=$(awk '{print $1}' <<<"$cluster"); cname=$(awk '{print $2}' <<<"$cluster"); cstatus=$(awk '{print $4}' <<<"$cluster")
  if [ "$cstatus" != "online" ]; then
    log "starting PostgreSQL $cver/$cname"
    pg_ctlcluster --skip-systemctl-redirect "$cver" "$cname" start >&2
  fi
  for _ in $(seq 1 50); do
    pg_isready -q -h 127.0.0.1 && return 0
    sleep 0.2
  done
  log "PostgreSQL does not accept connections on 127.0.0.1"
  return 1
}

# psql_admin SQL: runs SQL as the postgres superuser through the local socket.
psql_admin() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- psql -v ON_ERROR_STOP=1 -qAt -c "$1"
  else
    psql -v ON_ERROR_STOP=1 -qAt -U postgres -h 127.0.0.1 -c "$1"
  fi
}
