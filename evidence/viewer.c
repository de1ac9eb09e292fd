/*
 * viewer.c — index.html, the offline viewer of an evidence folder: one
 * self-contained page (no network: a Content-Security-Policy of
 * default-src 'none', the page's own style and script allowed by their
 * SHA-256, images only from the folder) that steps through the records
 * and shows the screenshot each step was followed by.
 *
 * The records and the manifest are embedded as JSON (every '<' written
 * \u003c, so no text closes the element); the script puts every value
 * on the page as text (textContent), never as markup, and takes an image
 * only from a record whose file name is shot-NNNN.png|jpeg. An a11y record
 * (an accessibility scan) shows its top rules and links to its reports,
 * only names a11y-NNNN.json|html (a snapshot record's snapshot-NNNN.txt
 * likewise). Page text in a record is data here too.
 */
#include "evidence/evidence_int.h"
#include "vault/vault.h"

#include <stdlib.h>
#include <string.h>

static const char CSS[] =
"body{font:15px/1.4 system-ui,sans-serif;margin:0;color:#111;background:#fff}"
"header{padding:.5em 1em;border-bottom:1px solid #999}h1{font-size:1.2em;margin:0}"
"#meta{margin:.3em 0;color:#333}main{display:flex;gap:1em;padding:1em}"
"#list{flex:0 0 34%;max-height:85vh;overflow:auto;margin:0;padding-left:2.5em}"
"#list button{all:unset;cursor:pointer;display:block;padding:2px 4px}"
"#list button:focus{outline:2px solid #1a4fd0}"
"#list button[aria-current=true]{background:#1a4fd0;color:#fff}"
"#rec{flex:1;min-width:0}dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 1em}"
"dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere;white-space:pre-wrap}"
"img{max-width:100%;border:1px solid #999}";

static const char JS[] =
"(function(){"
"function J(id){return JSON.parse(document.getElementById(id).textContent);}"
"var R=J('records'),M=J('manifest'),cur=0,SHOT=/^shot-[0-9]{4}\\.(png|jpeg)$/,"
"REP=/^(a11y-[0-9]{4}\\.(json|html)|snapshot-[0-9]{4}\\.txt)$/;"
"var list=document.getElementById('list'),rec=document.getElementById('rec'),"
"pos=document.getElementById('pos');"
"function el(t,x){var e=document.createElement(t);if(x!=null)e.textContent=String(x);"
"return e;}"
"function sum(r){var s=r.kind;if(r.tool)s+=' '+r.tool;"
"if(r.role||r.name)s+=' '+(r.role||'')+' \"'+(r.name||'')+'\"';"
"if(r.decision)s+=' \\u2192 '+r.decision;if(r.url)s+=' '+r.url;"
"if(r.file)s+=' '+r.file;var v=r.summary&&r.summary.violations;"
"if(r.kind==='a11y'&&v)s+=': '+v.rules+' rules, '+v.elements+' elements';return s;}"
"function a11y(r){var S=r.summary||{},d=el('div');"
"(S.top||[]).forEach(function(t){d.appendChild(el('p',t.rule+' ['+t.impact+'] WCAG '+"
"(t.wcag||[]).join(' ')+': '+t.elements+' element(s)'));});"
"(r.files||[]).forEach(function(f){if(!REP.test(f.file))return;var a=el('a','Open the "
"report '+f.file);a.href=f.file;var p=el('p');p.appendChild(a);d.appendChild(p);});"
"return d;}"
"function shotFor(i){for(var j=i;j<R.length;j++){var r=R[j];"
"if(r.kind==='shot'&&SHOT.test(r.file))return r;"
"if(j>i&&r.kind==='action')break;}return null;}"
"function show(i){if(!R.length){rec.textContent='No records.';return;}"
"cur=Math.max(0,Math.min(R.length-1,i));var r=R[cur];rec.textContent='';"
"rec.appendChild(el('h2','Record '+r.n+': '+r.kind));var dl=el('dl');"
"Object.keys(r).forEach(function(k){var v=r[k];dl.appendChild(el('dt',k));"
"dl.appendChild(el('dd',typeof v==='string'?v:JSON.stringify(v)));});"
"rec.appendChild(dl);if(r.kind==='a11y')rec.appendChild(a11y(r));"
"if(r.kind==='snapshot')rec.appendChild(a11y({files:[r]}));var s=shotFor(cur);"
"if(s){var f=el('figure'),im=el('img');"
"im.src=s.file;im.alt='Screenshot '+s.file+' (record '+s.n+')';f.appendChild(im);"
"f.appendChild(el('figcaption',s.file+' sha256 '+s.sha256));rec.appendChild(f);}"
"pos.textContent=(cur+1)+' / '+R.length;"
"var bs=list.querySelectorAll('button');for(var k=0;k<bs.length;k++)"
"bs[k].setAttribute('aria-current',k===cur?'true':'false');}"
"R.forEach(function(r,i){var li=el('li'),b=el('button',sum(r));"
"b.onclick=function(){show(i);};li.appendChild(b);list.appendChild(li);});"
"document.getElementById('prev').onclick=function(){show(cur-1);};"
"document.getElementById('next').onclick=function(){show(cur+1);};"
"document.addEventListener('keydown',function(e){"
"if(e.key==='ArrowRight'||e.key==='j')show(cur+1);"
"if(e.key==='ArrowLeft'||e.key==='k')show(cur-1);});"
"var m=[];Object.keys(M).forEach(function(k){m.push(k+': '+M[k]);});"
"document.getElementById('meta').textContent=m.join(' \\u00b7 ');show(0);"
"})();";

/* 'sha256-<base64>' of s, into out (at least 60 bytes). */
static void csp_hash(const char *s, char *out)
{
    uint8_t d[VAULT_SHA256_LEN];
    vault_sha256(s, strlen(s), d);
    memcpy(out, "'sha256-", 8);
    size_t k = base_b64_encode(d, sizeof d, out + 8);
    out[8 + k] = '\'';
    out[9 + k] = '\0';
}

/* s (n bytes of JSON) with every '<' written \u003c. */
static void put_json(base_buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '<')
            base_buf_puts(b, "\\u003c");
        else
            base_buf_putc(b, s[i]);
    }
}

/* The records (lines) as one JSON array. */
static void put_records(base_buf *b, const char *records, size_t n)
{
    base_buf_putc(b, '[');
    bool first = true;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(records + i, '\n', n - i);
        size_t len = nl ? (size_t)(nl - (records + i)) : n - i;
        if (len) {
            if (!first)
                base_buf_putc(b, ',');
            put_json(b, records + i, len);
            first = false;
        }
        i += len + 1;
    }
    base_buf_putc(b, ']');
}

int evidence_viewer_write(evidence *e, const char *records, size_t n, evidence_err *err)
{
    size_t mn = 0;
    char *man = evidence_read_file(e->dirfd, "manifest.json", EVIDENCE_MANIFEST_MAX, &mn);
    char hs[64], hj[64];
    csp_hash(CSS, hs);
    csp_hash(JS, hj);
    base_buf b = {0};
    base_buf_puts(&b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                  "img-src 'self' file:; style-src ");
    base_buf_puts(&b, hs);
    base_buf_puts(&b, "; script-src ");
    base_buf_puts(&b, hj);
    base_buf_puts(&b, "\">\n<meta name=\"referrer\" content=\"no-referrer\">\n"
                  "<title>cdpgate evidence</title>\n<style>");
    base_buf_puts(&b, CSS);
    base_buf_puts(&b, "</style></head>\n<body>\n<header><h1>cdpgate evidence</h1>"
                  "<p id=\"meta\"></p><nav aria-label=\"Records\"><button id=\"prev\">"
                  "Previous</button> <span id=\"pos\"></span> <button id=\"next\">Next"
                  "</button></nav>\n<p>Verify with <code>cdpgate evidence verify "
                  "FOLDER</code>.</p></header>\n<main><ol id=\"list\"></ol>"
                  "<section id=\"rec\" aria-live=\"polite\"></section></main>\n"
                  "<script type=\"application/json\" id=\"records\">");
    put_records(&b, records, n);
    base_buf_puts(&b, "</script>\n<script type=\"application/json\" id=\"manifest\">");
    if (man)
        put_json(&b, man, mn);
    else
        base_buf_puts(&b, "{}");
    base_buf_puts(&b, "</script>\n<script>");
    base_buf_puts(&b, JS);
    base_buf_puts(&b, "</script>\n</body></html>\n");
    free(man);
    if (b.oom) {
        base_buf_free(&b);
        return evidence_fail(err, EVIDENCE_ENOMEM, "evidence: index.html: out of memory");
    }
    int step = 0, rc = base_file_put(e->dirfd, "index.html", b.s, b.len, BASE_PUT_NEW, &step);
    base_buf_free(&b);
    if (rc != 0)
        return evidence_fail(err, EVIDENCE_EIO, "evidence: %s/index.html: write failed",
                             e->dir);
    return 0;
}
