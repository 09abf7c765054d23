vcl 4.1;

# Varnish in front of wikistore. It caches what the service's Cache-Control allows (latest
# content until purged or s-maxage, renders by tid per max-age), accepts PURGE from loopback only
# (the service sends one for every URL whose answer changed), and never caches the internal API.

import std;

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
        return (purge);
    }
    # The internal API answers per caller (admin token): never from the cache.
    if (req.url ~ "^/[^/]+/sys(/|\?|$)") {
        return (pass);
    }
}

sub vcl_hash {
    # One object per URL, whatever Host a client used: the service purges by URL.
    hash_data(req.url);
    return (lookup);
}
