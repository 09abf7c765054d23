vcl 4.1;

# Varnish in front of a MediaWiki wiki, with wikistore answering the wiki's REST API page routes
# (rest.php/v1/page/, /revision/, /transform/) from its stored renders; everything else reaches
# the wiki. Edit the paths and names marked below: the wiki's script path (`/w/`), the wiki's
# domain as the service's config names it (`wiki.example`), and both backends.
#
# The service's answers are cached as their Cache-Control says and purged by the service (PURGE
# with `xkey-purge`, from loopback: list this Varnish in the service's purge_hosts), so a change
# on the wiki reaches readers within moments of the wiki's notice (the WikistoreNotify extension).
# xkey is in Debian's varnish-modules package.

import xkey;

backend wiki {
    .host = "127.0.0.1";
    .port = "8080";
}

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
    if (req.url ~ "^/w/rest\.php/v1/(page|revision|transform)(/|\?|$)") {
        # The path as the client sent it: the service reads the title's escapes itself.
        set req.url = regsub(req.url, "^/w/rest\.php/", "/wiki.example/rest.php/");
        set req.backend_hint = wikistore;
    } else {
        set req.backend_hint = wiki;
    }
}

sub vcl_deliver {
    # The keys are for this cache, not for clients.
    unset resp.http.xkey;
}
