/*
 * embed.c — the smallest embedder: launch the browser, open a page,
 * evaluate, print. Built by CI against an installed tree:
 *   make install PREFIX=/opt/cdpgate
 *   cc -std=c11 -I/opt/cdpgate/include/cdpgate embed.c /opt/cdpgate/lib/libcdpgate.a
 */
#include <cdpgate.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    const char *url = argc > 1 ? argv[1] : "data:text/html,<title>embedded</title>";
    cdp_err e = {0};
    cdp_browser *b = cdp_browser_launch(NULL, &e);
    if (!b) {
        fprintf(stderr, "launch: %s\n", e.msg);
        return 1;
    }
    int rc = 1;
    char *out = NULL;
    cdp_page *p = cdp_page_open(b, 10000, &e);
    if (p && cdp_page_navigate(p, url, 10000, &e) == 0 &&
        cdp_page_eval(p, "document.title", 10000, &out, &e) == 0) {
        printf("%s\n", out);
        rc = 0;
    } else {
        fprintf(stderr, "%s\n", e.msg);
    }
    free(out);
    cdp_page_free(p);
    cdp_browser_free(b);
    return rc;
}
