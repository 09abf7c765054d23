# Shared helpers for the project's scripts: install Debian packages and start PostgreSQL on loopback.

log() { printf '[setup %s] %s\n' "$(date +%T)" "$*" >&2; }

# apt_get ARGS...: apt-get, waiting while another apt holds its locks (a fresh machine may be
# running unattended upgrades at boot). DPkg::Lock::Timeout waits for dpkg's lock but not for the
# package lists' lock `update` takes, so a refusal to lock is also retried, for up to 10 minutes.
apt_get() {
  local tries=0 out
  while true; do
    if out=$(DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 "$@" 2>&1); then
      printf '%s\n' "$out" >&2
      return 0
    fi
    if ! grep -q 'Could not get lock' <<<"$out" || [ "$tries" -ge 120 ]; then
      printf '%s\n' "$out" >&2
      return 1
    fi
    [ "$tries" -eq 0 ] && log "apt is busy (another apt holds its lock): waiting"
    tries=$((tries + 1))
    sleep 5
  done
}

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
  if [ -z "${APT_UPDATED:-}" ]; then
    apt_get update -qq || log "apt-get update failed: installing from the package lists at hand"
    APT_UPDATED=1
  fi
  apt_get install -y -qq --no-install-recommends "${missing[@]}"
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

# ensure_mariadb: MariaDB installed, running and accepting connections on 127.0.0.1:3306.
ensure_mariadb() {
  mariadb_ready() { mariadb-admin --protocol=tcp -h 127.0.0.1 -uroot ping >/dev/null 2>&1 || mariadb-admin ping >/dev/null 2>&1; }
  apt_install mariadb-server mariadb-client || return 1
  mariadb_ready && return 0
  log "starting MariaDB"
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
  if [ ! -d /var/lib/mysql/mysql ]; then mariadb-install-db --user=mysql --datadir=/var/lib/mysql >&2; fi
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql --bind-address=127.0.0.1 >&2
  for _ in $(seq 1 100); do
    mariadb_ready && return 0
    sleep 0.2
  done
  log "MariaDB does not accept connections"
  return 1
}

# mariadb_admin SQL: runs SQL as MariaDB's root through the local socket.
mariadb_admin() {
  mariadb -uroot -e "$1"
}
