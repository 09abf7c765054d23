#!/usr/bin/env bash
# A real MediaWiki 1.39 with Parsoid, from Debian's packages, on loopback and SQLite, loaded with
# the corpus in test/fixtures/corpus. Idempotent: a second `start` with everything up takes < 1 s.
#   scripts/wiki.sh start | stop | status | url
# WIKI_DIR (default .wiki) holds its database, settings and logs; WIKI_PORT (default 8089).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

WIKI_DIR=$(realpath -m "${WIKI_DIR:-.wiki}")
REPO_DIR=$(pwd)
WIKI_PORT=${WIKI_PORT:-8089}
MW=/usr/share/mediawiki
MAX_EXEC=${MAX_EXEC:-120}
# PHP workers: Parsoid's requests (rest.php) the wiki answers at once. More than cores: the suite's
# files ask for long renders and transforms together, and a short request (a follower's edit, a
# test page's render) that queued behind as many long ones as there were workers waited seconds,
# where sharing the cores with them it waits a little.
PHP_WORKERS=${PHP_WORKERS:-8}
# The rest (the Action API, index.php) has a pool of its own, as Wikimedia serves Parsoid apart
# from its API servers: a follower's poll or a deletion's lookup never waits behind renders.
PHP_API_WORKERS=${PHP_API_WORKERS:-4}
PACKAGES=(mediawiki php8.2-cli php8.2-fpm php8.2-sqlite3 php8.2-intl php8.2-mbstring php8.2-xml php8.2-curl
  php-apcu php8.2-gmp php8.2-readline php-luasandbox lua5.1 nginx sqlite3 curl)
BOT_USER=Botuser
BOT_APP=restbase
# Bot passwords must match ^[0-9a-w]{32,}$ or MediaWiki silently treats the login as a normal one.
BOT_PASSWORD=restbasebotpassword0123456789abc
export MW_CONFIG_FILE="$WIKI_DIR/LocalSettings.php"

url() { echo "http://127.0.0.1:$WIKI_PORT"; }
maint() { php "$MW/maintenance/$1.php" "${@:2}"; }

answering() {
  curl -fsS -m 10 "$(url)/api.php?action=query&meta=siteinfo&format=json" 2>/dev/null | grep -q '"generator"'
}

server_pid() {
  [ -f "$WIKI_DIR/server.pid" ] && kill -0 "$(cat "$WIKI_DIR/server.pid")" 2>/dev/null && cat "$WIKI_DIR/server.pid"
}

install_wiki() {
  [ -f "$WIKI_DIR/.installed" ] && return 0
  log "installing MediaWiki into $WIKI_DIR"
  rm -rf "$WIKI_DIR/db" "$WIKI_DIR/LocalSettings.php"
  mkdir -p "$WIKI_DIR/db" "$WIKI_DIR/logs"
  (cd "$MW" && MW_CONFIG_FILE= php maintenance/install.php --dbtype=sqlite --dbpath="$WIKI_DIR/db" --dbname=my_wiki \
    --server="$(url)" --scriptpath= --confpath="$WIKI_DIR" --lang=en --pass=AdminPassword123 --skins=Vector \
    --extensions=Cite,CategoryTree,ImageMap,InputBox,Interwiki,ParserFunctions,Poem,TemplateData,TextExtracts,PageImages,Scribunto \
    "Test Wiki" Admin >"$WIKI_DIR/logs/install.log")
  cat >>"$WIKI_DIR/LocalSettings.php" <<PHP
require_once '$WIKI_DIR/PortSettings.php';
require_once '$WIKI_DIR/ExtraSettings.php';
PHP
  write_port_settings
  write_extra_settings
  sqlite3 "$WIKI_DIR/db/my_wiki.sqlite" 'PRAGMA journal_mode=WAL;' >/dev/null
  maint update --quick >>"$WIKI_DIR/logs/install.log"
  maint createAndPromote --force --bot --sysop "$BOT_USER" BotUserPassword123 >>"$WIKI_DIR/logs/install.log"
  maint createBotPassword --appid="$BOT_APP" \
    --grants=basic,highvolume,editpage,editprotected,createeditmovepage,delete,rollback,patrol,protect \
    "$BOT_USER" "$BOT_PASSWORD" >>"$WIKI_DIR/logs/install.log"
  touch "$WIKI_DIR/.installed"
}

# Settings beyond install.php's, rewritten on every start so a wiki installed earlier gets new ones.
write_extra_settings() {
  cat >"$WIKI_DIR/ExtraSettings.php" <<PHP
<?php
wfLoadExtension( 'Parsoid', "\$IP/vendor/wikimedia/parsoid/extension.json" );
// Linting on: Parsoid's lint route answers an empty list without it (the tests compare the service's lint with it).
\$wgParsoidSettings = [ 'useSelser' => true, 'linting' => true ];
// MediaWiki's transform handlers (the same current MediaWiki serves under rest.php/v1/transform/),
// under rest.php/coredev/v0/transform/: the tests compare the service's transforms with them.
\$wgRestAPIAdditionalRouteFiles[] = 'includes/Rest/coreDevelopmentRoutes.json';
\$wgScribuntoDefaultEngine = 'luasandbox';
// Article paths as /index.php/Title under PHP-FPM too (MediaWiki assumes no PATH_INFO under CGI).
\$wgUsePathInfo = true;
\$wgArticlePath = '/index.php/\$1';
// The tests' bot edits the wiki's lists kept as interface pages (the bad image list).
\$wgGrantPermissions['editprotected']['editinterface'] = true;
// The ltgwiki corpus links with Latgalian namespace names.
\$wgNamespaceAliases['Taiss'] = NS_TEMPLATE;
\$wgNamespaceAliases['Kategoreja'] = NS_CATEGORY;
\$wgNamespaceAliases['Fails'] = NS_FILE;
\$wgNamespaceAliases['Modulis'] = 828;
\$wgNamespaceAliases['Vikipedeja'] = NS_PROJECT;
\$wgNamespaceAliases['Paleigs'] = NS_HELP;
\$wgNamespaceAliases['Lītuotuojs'] = NS_USER;
\$wgNamespaceAliases['Medeja'] = NS_MEDIA;
\$wgGroupPermissions['*']['edit'] = true;
\$wgGroupPermissions['*']['createpage'] = true;
\$wgGroupPermissions['*']['noratelimit'] = true;
// A limit the tests can reach: bot passwords without the highvolume grant (Reviewer's) lose
// noratelimit, so Reviewer's stashes of HTML are limited, everyone else's not.
\$wgRateLimits['stashbasehtml']['user'] = [ 5, 60 ];
\$wgGroupPermissions['sysop']['deleterevision'] = true;
\$wgGroupPermissions['sysop']['deletelogentry'] = true;
\$wgJobRunRate = 0;
\$wgEnableBotPasswords = true;
\$wgEnableUploads = false;
\$wgUseInstantCommons = false;
\$wgEnableEmail = false;
\$wgShowExceptionDetails = true;
\$wgDebugLogGroups['exception'] = '$WIKI_DIR/logs/exception.log';
\$wgDebugLogGroups['error'] = '$WIKI_DIR/logs/error.log';
// The content service on loopback is a trusted proxy: anonymous edits it forwards are credited to
// the address it names in X-Forwarded-For (documentation addresses in tests, hence private IPs too).
\$wgCdnServersNoPurge = [ '127.0.0.1', '::1' ];
\$wgUsePrivateIPs = true;
// VisualEditor, pointed by a test at a service it starts (ServiceSettings.php, written and removed
// by that test): MediaWiki's own RESTBase client end to end.
wfLoadExtension( 'VisualEditor' );
if ( is_readable( '$WIKI_DIR/ServiceSettings.php' ) ) {
  require '$WIKI_DIR/ServiceSettings.php';
}
// This repository's extension, telling a service of each change (read-your-writes). Where its
// notices go is written by the test that starts that service (NotifySettings.php), as an
// operator's LocalSettings.php would set it.
wfLoadExtension( 'WikistoreNotify', '$REPO_DIR/mediawiki/WikistoreNotify/extension.json' );
if ( is_readable( '$WIKI_DIR/NotifySettings.php' ) ) {
  require '$WIKI_DIR/NotifySettings.php';
}
// A farm from this one install, chosen by path as nginx passes it (MW_FARM_WIKI: /farm/{name}),
// or by the environment for maintenance scripts: each wiki its own database and script path.
\$farmPath = \$_SERVER['MW_FARM_WIKI'] ?? ( getenv( 'MW_FARM_WIKI' ) ?: '' );
if ( \$farmPath !== '' ) {
  \$farmName = substr( \$farmPath, strlen( '/farm/' ) );
  if ( !in_array( \$farmName, [ $FARM_PHP_LIST ], true ) ) {
    header( 'HTTP/1.1 404 Not Found' );
    header( 'Content-Type: text/html' );
    echo '<html><body>No such wiki in this farm.</body></html>';
    exit;
  }
  \$wgDBname = "farm_\$farmName";
  \$wgSitename = "Farm \$farmName";
  \$wgScriptPath = "/farm/\$farmName";
  \$wgArticlePath = "/farm/\$farmName/index.php/\\\$1";
  \$wgResourceBasePath = '';
  // Notices of the farm's changes, to wherever a test's service is (FarmNotifySettings.php, written by it).
  \$wgWikistoreNotifyDomain = "\$farmName.farm.test";
  \$wgWikistoreNotifyUrl = '';
  if ( is_readable( '$WIKI_DIR/FarmNotifySettings.php' ) ) {
    require '$WIKI_DIR/FarmNotifySettings.php';
  }
}
PHP
}

write_port_settings() {
  cat >"$WIKI_DIR/PortSettings.php" <<PHP
<?php
\$wgServer = '$(url)';
\$wgCanonicalServer = '$(url)';
PHP
}

# The farm's wikis (scripts/wiki.sh serves each under /farm/{name}/): copies of the wiki as
# imported, each with a page of its own, so a test can tell them apart.
FARM_WIKIS=(alpha beta gamma)
FARM_PHP_LIST=$(printf "'%s', " "${FARM_WIKIS[@]}")
install_farm() {
  for name in "${FARM_WIKIS[@]}"; do
    [ -f "$WIKI_DIR/db/farm_$name.sqlite" ] && continue
    log "making the farm's wiki $name"
    sqlite3 "$WIKI_DIR/db/my_wiki.sqlite" ".backup '$WIKI_DIR/db/farm_$name.sqlite.tmp'"
    mv "$WIKI_DIR/db/farm_$name.sqlite.tmp" "$WIKI_DIR/db/farm_$name.sqlite"
    echo "This is the farm's wiki $name." | MW_FARM_WIKI=/farm/$name maint edit --user Admin --summary "the farm's wiki $name" "Farm home" >>"$WIKI_DIR/logs/install.log" 2>&1
  done
}

import_corpus() {
  [ -f "$WIKI_DIR/.imported" ] && return 0
  local corpus=test/fixtures/corpus
  log "importing the corpus (takes a minute or two)"
  node scripts/corpus-dump.mjs "$corpus/wtf_wikipedia" "$WIKI_DIR/wtf_wikipedia.xml" >&2
  maint importDump --namespaces='0|4|10|14|828' "$corpus/ltgwiki/ltgwiki-pages-articles.xml.gz" >"$WIKI_DIR/logs/import.log" 2>&1
  maint importDump "$WIKI_DIR/wtf_wikipedia.xml" >>"$WIKI_DIR/logs/import.log" 2>&1
  maint initSiteStats --update >>"$WIKI_DIR/logs/import.log" 2>&1
  touch "$WIKI_DIR/.imported"
}

# Two tiny images and the bad image list naming one of them (allowed on one page), for the display
# HTML tests to compare with MediaWiki's own rendering. Set once before the server first runs:
# MediaWiki caches the bad image list for a minute, so it is there before any parse reads it.
seed_fixtures() {
  [ -f "$WIKI_DIR/.fixtures" ] && return 0
  local dir="$WIKI_DIR/fixture-images"
  mkdir -p "$dir"
  base64 -d >"$dir/Wikistore_fixture_bad_image.png" <<<'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGM4IScHAAK2AQU0pnWqAAAAAElFTkSuQmCC'
  base64 -d >"$dir/Wikistore_fixture_good_image.png" <<<'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGOQW2ADAAHaAPtcEaIXAAAAAElFTkSuQmCC'
  maint importImages --user Admin --comment 'test fixture' "$dir" >>"$WIKI_DIR/logs/install.log" 2>&1
  printf '%s\n' 'Images shown only on the pages named after them:' \
    '* [[:File:Wikistore fixture bad image.png]] except on [[Wikistore fixture bad image exception]]' |
    maint edit --user Admin --summary 'test fixture' 'MediaWiki:Bad_image_list' >>"$WIKI_DIR/logs/install.log" 2>&1
  touch "$WIKI_DIR/.fixtures"
}

# A second user, for tests of what one user may see of another's (drafts): a plain editor with a
# bot password, made once (a wiki installed before it existed gets it on its next start).
REVIEWER_USER=Reviewer
REVIEWER_PASSWORD=reviewerbotpassword0123456789abc
BLOCKED_USER=Blockeduser
BLOCKED_PASSWORD=blockedbotpassword0123456789abcd
BLOCKED_ADDRESS=203.0.113.77
seed_users() {
  if [ ! -f "$WIKI_DIR/.users" ]; then
    maint createAndPromote --force "$REVIEWER_USER" ReviewerPassword123 >>"$WIKI_DIR/logs/install.log" 2>&1
    maint createBotPassword --appid="$BOT_APP" --grants=basic,editpage,createeditmovepage \
      "$REVIEWER_USER" "$REVIEWER_PASSWORD" >>"$WIKI_DIR/logs/install.log" 2>&1 || true
    touch "$WIKI_DIR/.users"
  fi
  # A user blocked from editing, for what the service lets them do (drafts): made once. Without
  # autoblock: its refused edit would block the address every test edits from (127.0.0.1) for a day.
  if [ ! -f "$WIKI_DIR/.users-blocked" ]; then
    maint createAndPromote --force "$BLOCKED_USER" BlockedPassword123 >>"$WIKI_DIR/logs/install.log" 2>&1
    maint createBotPassword --appid="$BOT_APP" --grants=basic,editpage,createeditmovepage \
      "$BLOCKED_USER" "$BLOCKED_PASSWORD" >>"$WIKI_DIR/logs/install.log" 2>&1 || true
    echo "$BLOCKED_USER" | maint blockUsers --performer Admin --reason 'test fixture' --disable-autoblock >>"$WIKI_DIR/logs/install.log" 2>&1
    touch "$WIKI_DIR/.users-blocked"
  fi
  # An address blocked from editing (a documentation address, which the tests name in X-Forwarded-For).
  if [ ! -f "$WIKI_DIR/.address-blocked" ]; then
    echo "$BLOCKED_ADDRESS" | maint blockUsers --performer Admin --reason 'test fixture' --disable-autoblock >>"$WIKI_DIR/logs/install.log" 2>&1
    touch "$WIKI_DIR/.address-blocked"
  fi
}

# One PHP-FPM pool: its name, its socket (in serve/), its workers.
fpm_pool() {
  cat <<CONF
[$1]
; root only when the script runs as root (started with -R); ignored otherwise
user = root
group = root
listen = $WIKI_DIR/serve/$2
listen.mode = 0600
pm = static
pm.max_children = $3
env[MW_CONFIG_FILE] = $WIKI_DIR/LocalSettings.php
; a slow Parsoid transform of the longest pages takes over 30 s (php.ini's limit)
php_admin_value[max_execution_time] = $MAX_EXEC
php_admin_value[memory_limit] = -1
request_terminate_timeout = $((MAX_EXEC + 10))
catch_workers_output = yes
CONF
}

# The wiki is served as MediaWiki is in production: nginx in front of PHP-FPM pools, each worker
# one request at a time. PHP's built-in server (the other option) lets one worker accept two
# requests arriving together and answer them one after the other, so requests a client makes at
# once (a revision's metadata beside its render) would wait for each other.
write_server_config() {
  mkdir -p "$WIKI_DIR/serve/tmp"
  {
    cat <<CONF
[global]
pid = $WIKI_DIR/serve/php-fpm.pid
error_log = $WIKI_DIR/logs/php-fpm.log
daemonize = no
CONF
    fpm_pool parsoid php-fpm-parsoid.sock "$PHP_WORKERS"
    fpm_pool api php-fpm.sock "$PHP_API_WORKERS"
  } >"$WIKI_DIR/serve/php-fpm.conf"
  cat >"$WIKI_DIR/serve/fastcgi.conf" <<CONF
include /etc/nginx/fastcgi_params;
fastcgi_param SCRIPT_FILENAME \$document_root\$script;
fastcgi_param SCRIPT_NAME \$farm\$script;
fastcgi_param PATH_INFO \$pathinfo;
fastcgi_param MW_FARM_WIKI \$farm;
fastcgi_read_timeout $((MAX_EXEC + 10))s;
CONF
  cat >"$WIKI_DIR/serve/nginx.conf" <<CONF
user root;
worker_processes 1;
pid $WIKI_DIR/serve/nginx.pid;
error_log $WIKI_DIR/logs/nginx-error.log;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  client_body_temp_path $WIKI_DIR/serve/tmp/body;
  fastcgi_temp_path $WIKI_DIR/serve/tmp/fastcgi;
  proxy_temp_path $WIKI_DIR/serve/tmp/proxy;
  uwsgi_temp_path $WIKI_DIR/serve/tmp/uwsgi;
  scgi_temp_path $WIKI_DIR/serve/tmp/scgi;
  client_max_body_size 64m;
  # Action API reads name up to 50 titles in the URL.
  large_client_header_buffers 8 64k;
  # The second value is sent as Keep-Alive: timeout=75, so clients drop an idle connection first.
  keepalive_timeout 75s 75s;
  keepalive_requests 100000;
  server {
    listen 127.0.0.1:$WIKI_PORT;
    root $MW;
    # The farm's wikis, one install: /farm/{name}/api.php is wiki {name} (FarmSettings in ExtraSettings.php).
    set \$farm "";
    location ~ ^(?<farm>/farm/[a-z0-9]+)(?<script>/rest\\.php)(?<pathinfo>/.*)?\$ {
      include $WIKI_DIR/serve/fastcgi.conf;
      fastcgi_pass unix:$WIKI_DIR/serve/php-fpm-parsoid.sock;
    }
    location ~ ^(?<farm>/farm/[a-z0-9]+)(?<script>/[^/]+\\.php)(?<pathinfo>/.*)?\$ {
      include $WIKI_DIR/serve/fastcgi.conf;
      fastcgi_pass unix:$WIKI_DIR/serve/php-fpm.sock;
    }
    location ~ ^(?<script>/rest\\.php)(?<pathinfo>/.*)?\$ {
      include $WIKI_DIR/serve/fastcgi.conf;
      fastcgi_pass unix:$WIKI_DIR/serve/php-fpm-parsoid.sock;
    }
    location ~ ^(?<script>/[^/]+\\.php)(?<pathinfo>/.*)?\$ {
      include $WIKI_DIR/serve/fastcgi.conf;
      fastcgi_pass unix:$WIKI_DIR/serve/php-fpm.sock;
    }
  }
}
CONF
}

start_server() {
  write_extra_settings
  if server_pid >/dev/null && answering; then return 0; fi
  stop_server
  if ss -ltn "sport = :$WIKI_PORT" | grep -q LISTEN; then
    # Another checkout's wiki, set up by this same script, serves just as well.
    if answering; then
      log "reusing the MediaWiki already answering on $(url)"
      return 0
    fi
    log "port $WIKI_PORT is taken by another program"
    return 1
  fi
  write_port_settings
  write_server_config
  log "starting MediaWiki on $(url)"
  # setsid makes nginx one process group with a waiting shell, so stop ends them all (PHP-FPM's
  # master makes a group of its own: stop ends it by its pid file); the shell writes its own pid
  # ($$) as the server's.
  # Every descriptor of the background job is redirected: one left on a caller's pipe would keep
  # `$(scripts/wiki.sh start)` waiting for as long as the server runs.
  setsid bash -c "echo \$\$ > '$WIKI_DIR/server.pid'
    /usr/sbin/php-fpm8.2 -R -F -y '$WIKI_DIR/serve/php-fpm.conf' &
    /usr/sbin/nginx -c '$WIKI_DIR/serve/nginx.conf' -g 'daemon off;' &
    wait" >>"$WIKI_DIR/logs/server.log" 2>&1 </dev/null &
  for _ in $(seq 1 100); do
    answering && return 0
    sleep 0.2
  done
  log "MediaWiki did not answer; see $WIKI_DIR/logs/server.log"
  return 1
}

stop_server() {
  local pid fpm
  fpm=$(cat "$WIKI_DIR/serve/php-fpm.pid" 2>/dev/null) || fpm=
  if [ -n "$fpm" ] && kill -0 "$fpm" 2>/dev/null; then kill -TERM "$fpm" 2>/dev/null || true; fi
  if pid=$(server_pid); then kill -TERM -- "-$pid" 2>/dev/null || true; fi
  for _ in $(seq 1 50); do
    { [ -n "${pid:-}" ] && kill -0 "$pid" 2>/dev/null; } || { [ -n "$fpm" ] && kill -0 "$fpm" 2>/dev/null; } || break
    sleep 0.1
  done
  rm -f "$WIKI_DIR/server.pid"
}

case "${1:-start}" in
  start)
    # PHP reads the settings on every request: a wiki already running gets new ones too.
    if answering; then [ -f "$WIKI_DIR/.installed" ] && write_extra_settings && seed_users && install_farm; url; exit 0; fi
    apt_install "${PACKAGES[@]}"
    mkdir -p "$WIKI_DIR"
    install_wiki
    import_corpus
    write_extra_settings
    install_farm
    seed_fixtures
    seed_users
    start_server
    url
    ;;
  stop) stop_server ;;
  status) if answering; then echo "up at $(url)"; else echo down; exit 1; fi ;;
  url) url ;;
  *) echo "usage: $0 start|stop|status|url" >&2; exit 2 ;;
esac
