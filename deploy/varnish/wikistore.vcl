vcl 4.1;

# Varnish in front of wikistore. It caches what the service's Cache-Control allows (latest
# content until purged or s-maxage, renders by tid per max-age), accepts PURGE from loopback only,
# and never caches the internal API.
#
# Purges: the service tags every answer with surrogate keys (the `xkey` header: its page, its
# latest revision, its revision) and, when something changes, sends `PURGE /` with `xkey-purge`
# naming the keys: every cached URL form of the page goes at once, whatever its spelling, query
# string or API surface. It also purges the canonical URLs one by one, for caches without xkey.
# xkey is in Debian's varnish-modules package.

import std;
import xkey;

backend wikistore {
    .host = "127.0.0.1";
    .port = "7231";
}

acl purgers {
    "127.0.0.1";
    "::1";
}

sub vcl_recv {
    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(405, "PURGE is for the service only"));
        }
        if (req.http.xkey-purge) {
            set req.http.x-purged = xkey.purge(req.http.xkey-purge);
            return (synth(200, "Purged " + req.http.x-purged + " objects"));
        }
        return (purge);
    }
    # The internal API answers per caller (admin token): never from the cache.
    if (req.url ~ "^/[^/]+/sys(/|\?|$)") {
        return (pass);
    }
}

sub vcl_hash {
    # One object per URL, whatever Host a client used: the service purges by URL and by key.
    hash_data(req.url);
    return (lookup);
}

sub vcl_deliver {
    # The keys are for this cache, not for clients.
    unset resp.http.xkey;
}
